#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "runtime/kernels.hpp"

using namespace shardsynth::runtime;

namespace {
Tensor make(std::vector<int64_t> shape, std::vector<float> data) { return Tensor{std::move(shape), std::move(data)}; }

// Element-wise comparison within `tol`.
void check_close(const Tensor& got, const Tensor& want, float tol = 1e-5f) {
  REQUIRE(got.shape == want.shape);
  REQUIRE(got.data.size() == want.data.size());
  for (std::size_t i = 0; i < got.data.size(); ++i) CHECK(got.data[i] == doctest::Approx(want.data[i]).epsilon(tol));
}

constexpr float kLowest = std::numeric_limits<float>::lowest();
}  // namespace

TEST_CASE("linear_HandComputed") {
  // x [1, 2, 3] . W[2, 3]^T + b
  const Tensor x = make({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor w = make({2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f});
  const Tensor b = make({2}, {10, 20});
  check_close(linear(x, w, &b), make({1, 2, 2}, {8, 23, 8, 27.5f}));
  check_close(linear(x, w, nullptr), make({1, 2, 2}, {-2, 3, -2, 7.5f}));
  CHECK_THROWS_AS(linear(x, make({3, 2}, {0, 0, 0, 0, 0, 0}), nullptr), std::invalid_argument);
}

TEST_CASE("conv1d_HandComputed") {
  // x [2, 2] . W[2, 3] + b
  const Tensor x = make({2, 2}, {1, 2, 3, 4});
  const Tensor w = make({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = make({3}, {1, 1, 1});
  check_close(conv1d(x, w, &b), make({2, 3}, {10, 13, 16, 20, 27, 34}));
}

TEST_CASE("matmul_TwoByThree") {
  const Tensor a = make({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = make({3, 2}, {7, 8, 9, 10, 11, 12});
  check_close(matmul(a, b), make({2, 2}, {58, 64, 139, 154}));
  CHECK_THROWS_AS(matmul(a, a), std::invalid_argument);
}

TEST_CASE("matmul_BatchBroadcast") {
  // a [2, 1, 2] against b [2, 1]: b broadcast over the batch.
  const Tensor a = make({2, 1, 2}, {1, 2, 3, 4});
  const Tensor b = make({2, 1}, {10, 1});
  check_close(matmul(a, b), make({2, 1, 1}, {12, 34}));
  // a [1, 1, 2] against b [2, 2, 1]: a broadcast.
  const Tensor a1 = make({1, 1, 2}, {1, 1});
  const Tensor b2 = make({2, 2, 1}, {1, 2, 3, 4});
  check_close(matmul(a1, b2), make({2, 1, 1}, {3, 7}));
}

TEST_CASE("embedding_WholeAndOffset") {
  const Tensor ids = make({1, 3}, {0, 2, 3});
  const Tensor table = make({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31});
  check_close(embedding(ids, table), make({1, 3, 2}, {0, 1, 20, 21, 30, 31}));
  // A shard holding rows 2..3 of the vocabulary: id 0 gives zeros.
  const Tensor shard = make({2, 2}, {20, 21, 30, 31});
  check_close(embedding(ids, shard, 2), make({1, 3, 2}, {0, 0, 20, 21, 30, 31}));
}

TEST_CASE("layernorm_OneTwoThree") {
  const Tensor x = make({1, 3}, {1, 2, 3});
  // mean 2, biased var 2/3: (x - 2) / sqrt(2/3 + 1e-5)
  const float inv = 1.0f / std::sqrt(2.0f / 3.0f + 1e-5f);
  check_close(layernorm(x, make({3}, {1, 1, 1}), make({3}, {0, 0, 0})), make({1, 3}, {-inv, 0, inv}));
  check_close(layernorm(x, make({3}, {2, 2, 2}), make({3}, {1, 1, 1})), make({1, 3}, {1 - 2 * inv, 1, 1 + 2 * inv}));
}

TEST_CASE("softmax_RowsSumToOne") {
  const Tensor x = make({2, 2}, {0, 0, 0, std::log(3.0f)});
  check_close(softmax(x), make({2, 2}, {0.5f, 0.5f, 0.25f, 0.75f}));
  // Large values stay finite and a masked entry gets probability 0.
  const Tensor big = softmax(make({1, 3}, {1000, 1000, kLowest}));
  check_close(big, make({1, 3}, {0.5f, 0.5f, 0}));
}

TEST_CASE("gelu_ValuesAtZeroAndOne") {
  const Tensor x = make({3}, {0, 1, -1});
  check_close(gelu(x), make({3}, {0, 0.8413447f, -0.1586553f}));
  check_close(gelu_tanh(x), make({3}, {0, 0.8411920f, -0.1588080f}));
}

TEST_CASE("relu_DropoutScale") {
  const Tensor x = make({4}, {-2, -0.5f, 0, 3});
  check_close(relu(x), make({4}, {0, 0, 0, 3}));
  CHECK(dropout(x) == x);
  check_close(scale(x, 2.0), make({4}, {-1, -0.25f, 0, 1.5f}));
  CHECK_THROWS_AS(scale(x, 0.0), std::invalid_argument);
}

TEST_CASE("add_Broadcast") {
  const Tensor a = make({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor b = make({1, 2, 2}, {10, 20, 30, 40});
  check_close(add(a, b), make({2, 2, 2}, {11, 22, 33, 44, 15, 26, 37, 48}));
  check_close(add(make({2, 1}, {1, 2}), make({3}, {10, 20, 30})), make({2, 3}, {11, 21, 31, 12, 22, 32}));
  CHECK_THROWS_AS(add(make({2}, {1, 2}), make({3}, {1, 2, 3})), std::invalid_argument);
}

TEST_CASE("causal_mask_WholeAndOffsets") {
  const Tensor x = make({1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  check_close(causal_mask(x), make({1, 3, 3}, {1, kLowest, kLowest, 4, 5, kLowest, 7, 8, 9}));
  // Rows 2..3 of a 4x4 score matrix against key cols 2..3: q 2 sees k 2 only.
  const Tensor block = make({2, 2}, {1, 2, 3, 4});
  check_close(causal_mask(block, 2, 2), make({2, 2}, {1, kLowest, 3, 4}));
  // Rows 0..1 against cols 2..3: all masked; rows 2..3 against cols 0..1: none.
  check_close(causal_mask(block, 0, 2), make({2, 2}, {kLowest, kLowest, kLowest, kLowest}));
  CHECK(causal_mask(block, 2, 0) == block);
}

TEST_CASE("view_Reshape") {
  const Tensor x = make({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor v = view(x, {3, 2});
  CHECK(v.shape == std::vector<int64_t>{3, 2});
  CHECK(v.data == x.data);
  CHECK(view(x, {-1}).shape == std::vector<int64_t>{6});
  CHECK_THROWS_AS(view(x, {4}), std::invalid_argument);
}

TEST_CASE("permute_And_transpose") {
  const Tensor x = make({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor want = make({3, 2}, {1, 4, 2, 5, 3, 6});
  CHECK(permute(x, {1, 0}) == want);
  CHECK(transpose(x, -1, -2) == want);
  const Tensor y = make({1, 2, 2}, {1, 2, 3, 4});
  CHECK(permute(y, {2, 0, 1}) == make({2, 1, 2}, {1, 3, 2, 4}));
  CHECK_THROWS_AS(permute(x, {0, 0}), std::invalid_argument);
}

TEST_CASE("split_LastDim") {
  const Tensor x = make({2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(split(x, -1, 3, 1) == make({2, 2}, {2, 3, 8, 9}));
  CHECK_THROWS_AS(split(x, -1, 3, 3), std::invalid_argument);
}
