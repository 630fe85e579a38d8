#include "runtime/run_check.hpp"

#include <algorithm>
#include <cmath>

namespace shardsynth::runtime {

std::vector<ByteCount> byte_counts(const RunResult& result) {
  std::vector<ByteCount> rows;
  for (auto kind : {costs::CollectiveKind::all_gather, costs::CollectiveKind::reduce_scatter,
                    costs::CollectiveKind::all_reduce, costs::CollectiveKind::all_to_all}) {
    const auto sent = result.sent.find(kind);
    const auto predicted = result.predicted.find(kind);
    rows.push_back({kind, sent == result.sent.end() ? 0 : sent->second,
                    predicted == result.predicted.end() ? 0 : predicted->second});
  }
  return rows;
}

OutputComparison compare_output(const Tensor& expected, const Tensor& actual, double tolerance) {
  OutputComparison c;
  c.same_shape = expected.shape == actual.shape;
  if (!c.same_shape) return c;
  double scale = 0;
  for (std::size_t i = 0; i < expected.data.size(); ++i) {
    c.max_abs = std::max(c.max_abs, static_cast<double>(std::fabs(expected.data[i] - actual.data[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(expected.data[i])));
  }
  c.max_rel = scale > 0 ? c.max_abs / scale : c.max_abs;
  c.ok = c.max_rel <= tolerance;
  return c;
}

}  // namespace shardsynth::runtime
