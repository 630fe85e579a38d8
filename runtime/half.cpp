#include "runtime/half.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace shardsynth::runtime {
namespace {

uint32_t bits_of(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float float_of(uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// bfloat16 is fp32's top half: add half an ulp of the kept part (less one
// when the kept part is even, so that a tie rounds to even) and truncate.
uint16_t bfloat16_bits(float value) {
  const uint32_t bits = bits_of(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN, sign kept
  const uint32_t tie_to_even = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + tie_to_even) >> 16);
}

constexpr uint32_t kHalfOverflow = 0x477ff000u;  // 65520 = 65504 + half an ulp: rounds to infinity
constexpr uint32_t kHalfMinNormal = 0x38800000u;  // 2^-14

uint16_t float16_bits(float value) {
  const uint32_t bits = bits_of(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (magnitude >= kHalfOverflow) return sign | 0x7c00u;
  if (magnitude < kHalfMinNormal) {
    // Subnormal: a multiple of 2^-24; scaling by 2^24 is exact, nearbyint rounds to even.
    const float units = std::nearbyint(float_of(magnitude) * 16777216.0f);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(units));
  }
  const uint32_t exponent = (magnitude >> 23) - 127 + 15;
  const uint32_t mantissa = magnitude & 0x7fffffu;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry moves into the exponent, as it should
  return static_cast<uint16_t>(sign | half);
}

float float16_value(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) / 16777216.0f;  // mantissa * 2^-24, exact
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return float_of(sign | 0x7f800000u | (mantissa << 13));
  return float_of(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

void require_half(ir::DType dtype) {
  if (!is_half(dtype)) throw std::logic_error("16-bit conversion of a " + ir::dtype_name(dtype) + " value");
}

}  // namespace

bool is_half(ir::DType dtype) { return dtype == ir::DType::float16 || dtype == ir::DType::bfloat16; }

bool has_half(const ir::Graph& graph) {
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    if (is_half(node.type.dtype)) return true;
    for (const ir::Param& p : node.params) {
      if (is_half(p.type.dtype)) return true;
    }
  }
  return false;
}

uint16_t half_bits(float value, ir::DType dtype) {
  require_half(dtype);
  return dtype == ir::DType::bfloat16 ? bfloat16_bits(value) : float16_bits(value);
}

float half_value(uint16_t bits, ir::DType dtype) {
  require_half(dtype);
  return dtype == ir::DType::bfloat16 ? float_of(static_cast<uint32_t>(bits) << 16) : float16_value(bits);
}

float round_to(float value, ir::DType dtype) { return is_half(dtype) ? half_value(half_bits(value, dtype), dtype) : value; }

void round_in_place(Tensor& t, ir::DType dtype) {
  if (t.holds_bits() && t.bits.size() != static_cast<std::size_t>(t.numel())) {
    throw std::logic_error("a " + ir::dtype_name(t.dtype) + " tensor without its 16-bit storage");
  }
  if (t.dtype == dtype) return;
  if (t.holds_bits()) {
    const ir::DType from = t.dtype;
    t.data = from_half_bits(t.bits, from);
    t.bits = {};  // releases the 16-bit storage
    t.dtype = ir::DType::float32;
  }
  t.dtype = dtype;
  if (!is_half(dtype)) return;
  t.bits = to_half_bits(t.data, dtype);
  t.data = {};  // releases the fp32 storage
}

Tensor widened(Tensor t) {
  if (t.holds_bits()) round_in_place(t, ir::DType::float32);
  return t;
}

Fp32Block fp32_block(const Tensor& t, int64_t row, int64_t rows, int64_t col, int64_t cols, std::vector<float>& scratch) {
  const int64_t width = t.shape.at(1);
  if (!t.holds_bits()) return {t.data.data() + row * width + col, width};
  scratch.resize(static_cast<std::size_t>(rows * cols));
  float* to = scratch.data();
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* from = t.bits.data() + (row + r) * width + col;
    if (t.dtype == ir::DType::bfloat16) {
      for (int64_t c = 0; c < cols; ++c) *to++ = float_of(static_cast<uint32_t>(from[c]) << 16);
    } else {
      for (int64_t c = 0; c < cols; ++c) *to++ = float16_value(from[c]);
    }
  }
  return {scratch.data(), cols};
}

int64_t widen_tile(const Tensor& t, int64_t lines, int64_t length) {
  if (!t.holds_bits() || length == 0) return std::max<int64_t>(lines, 1);
  // A multiple of 64 lines, at least 64: GEMM kernels block the output's
  // columns in powers of two, so tiles that start on such a boundary are
  // summed as the whole matrix is (and none is a sliver).
  constexpr int64_t kAlign = 64;
  const int64_t tile = std::max<int64_t>(kAlign, kWidenTile / length / kAlign * kAlign);
  return std::min(tile, std::max<int64_t>(lines, 1));
}

bool all_finite(const Tensor& t) {
  if (!t.holds_bits()) return std::all_of(t.data.begin(), t.data.end(), [](float v) { return std::isfinite(v); });
  // Infinity and NaN are the patterns whose exponent is all ones.
  const uint16_t exponent = t.dtype == ir::DType::bfloat16 ? 0x7f80u : 0x7c00u;
  return std::all_of(t.bits.begin(), t.bits.end(), [exponent](uint16_t b) { return (b & exponent) != exponent; });
}

Tensor rounded(Tensor t, ir::DType dtype) {
  round_in_place(t, dtype);
  return t;
}

std::vector<uint16_t> to_half_bits(const std::vector<float>& values, ir::DType dtype) {
  require_half(dtype);
  std::vector<uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = half_bits(values[i], dtype);
  return out;
}

std::vector<float> from_half_bits(const std::vector<uint16_t>& bits, ir::DType dtype) {
  require_half(dtype);
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = half_value(bits[i], dtype);
  return out;
}

}  // namespace shardsynth::runtime
