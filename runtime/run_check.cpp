#include "runtime/run_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "runtime/half.hpp"

namespace shardsynth::runtime {

std::vector<ByteCount> byte_counts(const RunResult& result) {
  std::vector<ByteCount> rows;
  for (const auto kind : costs::kCommunicatingKinds) {
    const auto sent = result.sent.find(kind);
    const auto predicted = result.predicted.find(kind);
    rows.push_back({kind, sent == result.sent.end() ? 0 : sent->second,
                    predicted == result.predicted.end() ? 0 : predicted->second});
  }
  return rows;
}

bool print_byte_table(const RunResult& result) {
  std::printf("%-16s %20s %20s\n", "collective", "bytes sent (rank 0)", "cost model");
  int64_t sent_total = 0, predicted_total = 0;
  bool same = true;
  for (const ByteCount& row : byte_counts(result)) {
    sent_total += row.sent;
    predicted_total += row.predicted;
    std::printf("%-16s %20lld %20lld%s\n", costs::collective_name(row.kind).c_str(), static_cast<long long>(row.sent),
                static_cast<long long>(row.predicted), row.sent == row.predicted ? "" : "  MISMATCH");
    same = same && row.sent == row.predicted;
  }
  std::printf("%-16s %20lld %20lld\n", "total", static_cast<long long>(sent_total), static_cast<long long>(predicted_total));
  return same;
}

double check_tolerance(const ir::Graph& graph) { return has_half(graph) ? kHalfCheckTolerance : kCheckTolerance; }

OutputComparison compare_output(const Tensor& expected, const Tensor& actual, double tolerance) {
  OutputComparison c;
  c.same_shape = expected.shape == actual.shape;
  if (!c.same_shape) return c;
  double scale = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(expected.numel()); ++i) {
    c.max_abs = std::max(c.max_abs, static_cast<double>(std::fabs(element(expected, i) - element(actual, i))));
    scale = std::max(scale, static_cast<double>(std::fabs(element(expected, i))));
  }
  c.max_rel = scale > 0 ? c.max_abs / scale : c.max_abs;
  c.ok = c.max_rel <= tolerance;
  return c;
}

}  // namespace shardsynth::runtime
