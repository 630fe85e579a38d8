// The cross-entropy head's kernels (runtime/kernels_loss.cpp): on whole
// logits against a double-precision log-softmax written out here, and
// vocabulary-parallel (Megatron-LM's scheme: each shard its slice of the
// vocabulary, the rows' max and sum of exponentials combined across shards)
// against the unsharded kernel, within 1e-6 relative in fp32, forward and
// backward; positions split too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/init.hpp"
#include "runtime/kernels.hpp"
#include "runtime/kernels_backward.hpp"

namespace shardsynth::runtime {
namespace {

constexpr int64_t kBatch = 2, kSeq = 3, kVocab = 24;

Tensor logits_fixture() {
  Tensor t{{kBatch, kSeq, kVocab}, {}};
  for (int64_t i = 0; i < t.shape[0] * t.shape[1] * t.shape[2]; ++i) {
    t.data.push_back(8.0f * uniform01(7, "logits", static_cast<uint64_t>(i)) - 4.0f);
  }
  return t;
}

Tensor labels_fixture() {
  Tensor t{{kBatch, kSeq}, {}};
  for (int64_t i = 0; i < kBatch * kSeq; ++i) {
    t.data.push_back(static_cast<float>(static_cast<int64_t>(uniform01(7, "labels", static_cast<uint64_t>(i)) * kVocab)));
  }
  return t;
}

// The mean over rows of log(sum exp z) - z[label], in double.
double reference_loss(const Tensor& logits, const Tensor& labels) {
  double total = 0;
  for (int64_t r = 0; r < labels.numel(); ++r) {
    const float* z = logits.data.data() + r * kVocab;
    double sum = 0;
    for (int64_t j = 0; j < kVocab; ++j) sum += std::exp(static_cast<double>(z[j]));
    total += std::log(sum) - z[static_cast<int64_t>(labels.data[r])];
  }
  return total / static_cast<double>(labels.numel());
}

double relative(double got, double want) { return std::abs(got - want) / std::max(1e-30, std::abs(want)); }

// The vocabulary cut into `shards` slices: each slice's statistics, gathered
// side by side as the exchange lays them out ([rows, 2 shards]).
Tensor gathered_stats(const Tensor& logits, int64_t shards) {
  std::vector<Tensor> pieces;
  for (int64_t s = 0; s < shards; ++s) pieces.push_back(softmax_row_stats(slice_part(logits, 2, shards, s)));
  const int64_t rows = kBatch * kSeq;
  Tensor out{{rows, 2 * shards}, std::vector<float>(static_cast<std::size_t>(rows * 2 * shards))};
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t s = 0; s < shards; ++s) {
      out.data[r * 2 * shards + 2 * s] = pieces[s].data[2 * r];
      out.data[r * 2 * shards + 2 * s + 1] = pieces[s].data[2 * r + 1];
    }
  }
  return out;
}

}  // namespace

TEST_CASE("cross_entropy_WholeMatchesLogSoftmax") {
  const Tensor logits = logits_fixture(), labels = labels_fixture();
  const double divisor = static_cast<double>(kBatch * kSeq);
  const Tensor loss = cross_entropy(logits, labels, softmax_row_stats(logits), 0, divisor);
  CHECK(loss.shape.empty());
  CHECK(relative(loss.data[0], reference_loss(logits, labels)) < 1e-6);
  // The gradient: (softmax - onehot) / divisor, each row summing to zero.
  const Tensor dx = cross_entropy_backward(logits, labels, softmax_row_stats(logits), 0, divisor, Tensor{{}, {1.0f}});
  for (int64_t r = 0; r < kBatch * kSeq; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < kVocab; ++j) sum += dx.data[r * kVocab + j];
    CHECK(std::abs(sum) < 1e-7);
  }
}

TEST_CASE("cross_entropy_VocabularyParallelEqualsUnsharded") {
  const Tensor logits = logits_fixture(), labels = labels_fixture();
  const double divisor = static_cast<double>(kBatch * kSeq);
  const Tensor whole = cross_entropy(logits, labels, softmax_row_stats(logits), 0, divisor);
  const Tensor dy{{}, {0.75f}};
  const Tensor whole_dx = cross_entropy_backward(logits, labels, softmax_row_stats(logits), 0, divisor, dy);
  for (int64_t shards : {2, 3, 4, 8}) {
    CAPTURE(shards);
    const Tensor stats = combine_row_stats(gathered_stats(logits, shards));
    double total = 0;
    std::vector<Tensor> grads;
    for (int64_t s = 0; s < shards; ++s) {
      const Tensor piece = slice_part(logits, 2, shards, s);
      const int64_t offset = s * (kVocab / shards);
      total += cross_entropy(piece, labels, stats, offset, divisor).data[0];  // partial sums of the loss
      grads.push_back(cross_entropy_backward(piece, labels, stats, offset, divisor, dy));
    }
    CHECK(relative(total, whole.data[0]) < 1e-6);
    const Tensor dx = concat_parts(grads, 2);
    double worst = 0, largest = 0;
    for (std::size_t i = 0; i < dx.data.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(dx.data[i] - whole_dx.data[i])));
      largest = std::max(largest, static_cast<double>(std::abs(whole_dx.data[i])));
    }
    CHECK(worst <= 1e-6 * largest);
  }
}

TEST_CASE("cross_entropy_PositionsSplitSumToTheLoss") {
  const Tensor logits = logits_fixture(), labels = labels_fixture();
  const double divisor = static_cast<double>(kBatch * kSeq);
  const Tensor whole = cross_entropy(logits, labels, softmax_row_stats(logits), 0, divisor);
  double total = 0;
  for (int64_t b = 0; b < kBatch; ++b) {
    const Tensor rows = slice_part(logits, 0, kBatch, b);
    total += cross_entropy(rows, slice_part(labels, 0, kBatch, b), softmax_row_stats(rows), 0, divisor).data[0];
  }
  CHECK(relative(total, whole.data[0]) < 1e-6);
}

}  // namespace shardsynth::runtime
