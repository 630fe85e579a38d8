// The cross-entropy head on whole logits or on one shard of them: positions
// split among ranks, the vocabulary too (Megatron-LM's vocabulary-parallel
// cross-entropy, with the rows' statistics exchanged as in
// costs/row_exchange.hpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "runtime/kernels.hpp"
#include "runtime/kernels_backward.hpp"

namespace shardsynth::runtime {
namespace {

// Rows and local vocabulary width of logits [..., v] with labels [...].
std::pair<int64_t, int64_t> loss_rows(const char* kind, const Tensor& logits, const Tensor& labels) {
  if (logits.rank() < 1 || labels.rank() + 1 != logits.rank() ||
      !std::equal(labels.shape.begin(), labels.shape.end(), logits.shape.begin())) {
    throw std::invalid_argument(std::string(kind) + ": labels must be the logits' shape without its last dim");
  }
  const int64_t width = logits.shape.back();
  return {labels.numel(), width};
}

void check_stats(const char* kind, const Tensor& stats, int64_t rows) {
  if (stats.rank() != 2 || stats.shape[0] != rows || stats.shape[1] != 2) {
    throw std::invalid_argument(std::string(kind) + ": row statistics must be [rows, 2]");
  }
}

// The local column of global vocabulary entry `label`, or -1 when another shard holds it.
int64_t local_column(float label, int64_t offset, int64_t width) {
  const auto column = static_cast<int64_t>(label) - offset;
  return column >= 0 && column < width ? column : -1;
}

}  // namespace

Tensor softmax_row_stats(const Tensor& logits) {
  if (logits.rank() < 1 || logits.shape.back() < 1) throw std::invalid_argument("softmax_row_stats: empty rows");
  const int64_t width = logits.shape.back();
  const int64_t rows = logits.numel() / width;
  Tensor stats{{rows, 2}, std::vector<float>(static_cast<std::size_t>(2 * rows))};
  for (int64_t r = 0; r < rows; ++r) {
    const float* z = logits.data.data() + r * width;
    const float top = *std::max_element(z, z + width);
    double sum = 0;
    for (int64_t j = 0; j < width; ++j) sum += std::exp(static_cast<double>(z[j]) - top);
    stats.data[2 * r] = top;
    stats.data[2 * r + 1] = static_cast<float>(sum);
  }
  return stats;
}

Tensor combine_row_stats(const Tensor& gathered) {
  if (gathered.rank() != 2 || gathered.shape[1] < 2 || gathered.shape[1] % 2 != 0) {
    throw std::invalid_argument("combine_row_stats: expected [rows, 2 n] (max, sum) pairs");
  }
  const int64_t rows = gathered.shape[0], shards = gathered.shape[1] / 2;
  Tensor stats{{rows, 2}, std::vector<float>(static_cast<std::size_t>(2 * rows))};
  for (int64_t r = 0; r < rows; ++r) {
    const float* pairs = gathered.data.data() + r * 2 * shards;
    float top = pairs[0];
    for (int64_t i = 1; i < shards; ++i) top = std::max(top, pairs[2 * i]);
    double sum = 0;
    for (int64_t i = 0; i < shards; ++i) sum += pairs[2 * i + 1] * std::exp(static_cast<double>(pairs[2 * i]) - top);
    stats.data[2 * r] = top;
    stats.data[2 * r + 1] = static_cast<float>(sum);
  }
  return stats;
}

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& stats, int64_t vocab_offset,
                     double divisor) {
  const auto [rows, width] = loss_rows("cross_entropy", logits, labels);
  check_stats("cross_entropy", stats, rows);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    // log(sum) + max is the row's log-sum-exp: the shard holding the first
    // vocabulary entry adds it, the shard holding the label subtracts its logit.
    if (vocab_offset == 0) total += std::log(static_cast<double>(stats.data[2 * r + 1])) + stats.data[2 * r];
    const int64_t column = local_column(labels.data[r], vocab_offset, width);
    if (column >= 0) total -= logits.data[r * width + column];
  }
  return Tensor{{}, {static_cast<float>(total / divisor)}};
}

Tensor cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& stats, int64_t vocab_offset,
                              double divisor, const Tensor& dy) {
  const auto [rows, width] = loss_rows("cross_entropy_backward", logits, labels);
  check_stats("cross_entropy_backward", stats, rows);
  if (dy.numel() != 1) throw std::invalid_argument("cross_entropy_backward: the loss's gradient must be a scalar");
  const double scale = dy.data[0] / divisor;
  Tensor dx = zeros(logits.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double top = stats.data[2 * r], sum = stats.data[2 * r + 1];
    const float* z = logits.data.data() + r * width;
    float* g = dx.data.data() + r * width;
    for (int64_t j = 0; j < width; ++j) g[j] = static_cast<float>(scale * std::exp(z[j] - top) / sum);
    const int64_t column = local_column(labels.data[r], vocab_offset, width);
    if (column >= 0) g[column] -= static_cast<float>(scale);
  }
  return dx;
}

}  // namespace shardsynth::runtime
