// The kernels of Llama's op kinds: rms_norm, silu, mul, rotary, repeat_kv.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "runtime/kernels.hpp"

using namespace shardsynth::runtime;

namespace {

Tensor make(std::vector<int64_t> shape, std::vector<float> data) { return Tensor{std::move(shape), std::move(data)}; }

Tensor counting(std::vector<int64_t> shape) {
  Tensor t = zeros(shape);
  for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = 0.1f * static_cast<float>(i % 13) - 0.5f;
  return t;
}

void check_close(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape == want.shape);
  for (std::size_t i = 0; i < got.data.size(); ++i) CHECK(got.data[i] == doctest::Approx(want.data[i]).epsilon(1e-5));
}

}  // namespace

TEST_CASE("rms_norm_HandComputed") {
  // Row [3, 4]: mean square 12.5, so x / sqrt(12.5 + eps) * weight.
  const Tensor out = rms_norm(make({1, 2}, {3, 4}), make({2}, {1, 2}), 0.0f);
  const float r = 1.0f / std::sqrt(12.5f);
  check_close(out, make({1, 2}, {3 * r, 8 * r}));
  CHECK_THROWS_AS(rms_norm(make({1, 2}, {3, 4}), make({3}, {1, 1, 1})), std::invalid_argument);
}

TEST_CASE("silu_And_mul") {
  check_close(silu(make({3}, {0, 1, -2})), make({3}, {0, 1 / (1 + std::exp(-1.0f)), -2 / (1 + std::exp(2.0f))}));
  check_close(mul(make({2}, {2, 3}), make({2}, {-1, 4})), make({2}, {-2, 12}));
  CHECK_THROWS_AS(mul(make({2}, {2, 3}), make({1}, {1})), std::invalid_argument);
}

TEST_CASE("rotary_PositionZeroIsIdentityAndPairsTurn") {
  // [seq 2, head_dim 4], theta 10000: pair (0, 2) turns by p, pair (1, 3) by p / 100.
  const Tensor x = make({2, 4}, {1, 2, 3, 4, 1, 2, 3, 4});
  const Tensor y = rotary(x, 10000.0);
  const float c0 = std::cos(1.0f), s0 = std::sin(1.0f), c1 = std::cos(0.01f), s1 = std::sin(0.01f);
  check_close(y, make({2, 4}, {1, 2, 3, 4, 1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1}));
  CHECK_THROWS_AS(rotary(make({1, 3}, {1, 2, 3}), 10000.0), std::invalid_argument);
}

TEST_CASE("rotary_SeqShardWithOffsetMatchesTheWholeTensor") {
  const Tensor x = counting({2, 3, 8, 6});  // [b, heads, seq, head_dim]
  const Tensor whole = rotary(x, 500000.0);
  for (int part = 0; part < 2; ++part) {
    const Tensor local = slice_part(x, 2, 2, part);
    check_close(rotary(local, 500000.0, 4 * part), slice_part(whole, 2, 2, part));
  }
}

TEST_CASE("repeat_kv_RepeatsEachHeadInPlace") {
  const Tensor x = make({1, 2, 1, 2}, {1, 2, 3, 4});  // 2 KV heads of [1, 2]
  check_close(repeat_kv(x, 4), make({1, 4, 1, 2}, {1, 2, 1, 2, 3, 4, 3, 4}));
  check_close(repeat_kv(x, 2), x);
  CHECK_THROWS_AS(repeat_kv(x, 3), std::invalid_argument);
}
