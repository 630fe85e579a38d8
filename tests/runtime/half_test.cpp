// The 16-bit types on CPU ranks (runtime/half.hpp): rounding to nearest, ties
// to even, as torch's casts do, with infinities, NaN and float16's subnormals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/half.hpp"

using namespace shardsynth;
using namespace shardsynth::runtime;

namespace {

constexpr ir::DType kBf16 = ir::DType::bfloat16;
constexpr ir::DType kFp16 = ir::DType::float16;

}  // namespace

TEST_CASE("half_EveryPatternRoundTrips") {
  for (ir::DType dtype : {kBf16, kFp16}) {
    CAPTURE(ir::dtype_name(dtype));
    for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
      const float value = half_value(static_cast<uint16_t>(bits), dtype);
      if (std::isnan(value)) continue;
      CHECK(half_bits(value, dtype) == bits);
    }
  }
}

TEST_CASE("half_TiesRoundToEven") {
  // bfloat16 keeps 8 significant bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
  CHECK(round_to(1.0f + std::ldexp(1.0f, -8), kBf16) == 1.0f);
  CHECK(round_to(1.0f + 3 * std::ldexp(1.0f, -8), kBf16) == 1.0f + std::ldexp(1.0f, -6));
  CHECK(round_to(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20), kBf16) == 1.0f + std::ldexp(1.0f, -7));
  // float16 keeps 11: 1 + 2^-11 ties to 1, 1 + 3 * 2^-11 to 1 + 2^-9.
  CHECK(round_to(1.0f + std::ldexp(1.0f, -11), kFp16) == 1.0f);
  CHECK(round_to(1.0f + 3 * std::ldexp(1.0f, -11), kFp16) == 1.0f + std::ldexp(1.0f, -9));
  CHECK(round_to(-2.0f - std::ldexp(1.0f, -10), kFp16) == -2.0f);  // the ulp at 2 is 2^-9
}

TEST_CASE("half_Float16RangeSubnormalsAndSpecials") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(round_to(65504.0f, kFp16) == 65504.0f);
  CHECK(round_to(65519.0f, kFp16) == 65504.0f);
  CHECK(round_to(65520.0f, kFp16) == inf);  // halfway to the next binade: ties to even, which is infinity
  CHECK(round_to(-1e6f, kFp16) == -inf);
  CHECK(round_to(std::ldexp(1.0f, -24), kFp16) == std::ldexp(1.0f, -24));  // the smallest subnormal
  CHECK(round_to(std::ldexp(1.0f, -25), kFp16) == 0.0f);                   // half of it ties to even: 0
  CHECK(round_to(3 * std::ldexp(1.0f, -25), kFp16) == std::ldexp(1.0f, -23));
  CHECK(half_bits(inf, kFp16) == 0x7c00);
  CHECK(std::isnan(round_to(std::nanf(""), kFp16)));
  CHECK(std::isnan(round_to(std::nanf(""), kBf16)));
  CHECK(round_to(std::numeric_limits<float>::max(), kBf16) == inf);  // past bf16 max 0x7f7f + half an ulp
  CHECK(round_to(-0.0f, kBf16) == 0.0f);
  CHECK(std::signbit(round_to(-0.0f, kBf16)));
}

TEST_CASE("half_RoundInPlaceLabelsTheTensor") {
  Tensor t = zeros({3});
  t.data = {0.1f, 1.0f / 3.0f, 7.0f};
  const Tensor b = rounded(t, kBf16);
  CHECK(b.dtype == kBf16);
  CHECK(b.data.empty());  // 16-bit storage only
  // torch.tensor(0.1).bfloat16().view(torch.int16) == 0x3dcd
  CHECK(b.bits == std::vector<uint16_t>{0x3dcd, 0x3eab, 0x40e0});
  CHECK(element(b, 0) == half_value(0x3dcd, kBf16));
  CHECK(element(b, 2) == 7.0f);
  const Tensor f = rounded(t, ir::DType::float32);
  CHECK(f.data == t.data);  // fp32: the label alone
  CHECK(f.bits.empty());
  CHECK(to_half_bits(widened(b).data, kBf16) == b.bits);
  CHECK(from_half_bits({0x3c00, 0xc000}, kFp16) == std::vector<float>{1.0f, -2.0f});
}
