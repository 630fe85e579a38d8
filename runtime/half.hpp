#pragma once
// The 16-bit floating types on CPU ranks: bfloat16 and float16 as their bit
// patterns (uint16_t), converted from fp32 by rounding to nearest, ties to
// even, as torch's CPU casts do. A Tensor of a 16-bit dtype holds its
// elements as these patterns (Tensor::bits): it is kept, sent and uploaded
// as 16 bits; kernels read it widened to fp32 and accumulate in fp32, as
// PyTorch's CPU kernels do, and their result is rounded once on store.
#include <cstdint>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/graph.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// Whether `dtype` is a 16-bit floating type (float16, bfloat16).
bool is_half(ir::DType dtype);

// Whether any tensor or parameter of `graph` is of a 16-bit dtype.
bool has_half(const ir::Graph& graph);

// The bit pattern of `value` rounded to `dtype` (float16 or bfloat16): nearest,
// ties to even; overflow gives infinity, NaN stays NaN.
uint16_t half_bits(float value, ir::DType dtype);
// The value of bit pattern `bits` of `dtype` (float16 or bfloat16), exactly.
float half_value(uint16_t bits, ir::DType dtype);
// `value` rounded to `dtype`: itself for float32 and int64.
float round_to(float value, ir::DType dtype);

// `t` cast to `dtype`, in that dtype's storage: to a 16-bit dtype every
// element is rounded into Tensor::bits; to float32 or int64 16-bit elements
// are widened exactly into Tensor::data (fp32 elements keep their values,
// only the label changes). A cast to t's own dtype changes nothing.
void round_in_place(Tensor& t, ir::DType dtype);
Tensor rounded(Tensor t, ir::DType dtype);

// Element `i` of `t` as fp32, whatever its storage.
inline float element(const Tensor& t, std::size_t i) { return t.holds_bits() ? half_value(t.bits[i], t.dtype) : t.data[i]; }
// `t` with fp32 storage: a 16-bit tensor widened exactly (labelled float32);
// any other tensor unchanged.
Tensor widened(Tensor t);
// A block of a matrix as fp32, as a GEMM reads it.
struct Fp32Block {
  const float* data = nullptr;  // the block's first element, row-major
  int64_t ld = 0;               // elements from one of the block's rows to the next
};
// The widening loader of the kernels that read a large operand by tiles
// (the weights of linear, conv1d and embedding): rows [row, row + rows) and
// columns [col, col + cols) of 2-D `t` as fp32. For fp32 storage the block
// in place (ld = t's columns, no copy); for 16-bit storage the block
// widened into `scratch` (ld = cols), so that only a tile, never the whole
// tensor, is held in fp32.
Fp32Block fp32_block(const Tensor& t, int64_t row, int64_t rows, int64_t col, int64_t cols, std::vector<float>& scratch);
// How many of `lines` rows or columns (each of `length` elements) of a
// tensor a kernel widens at a time: all of them for fp32 storage (read in
// place), else a tile of about kWidenTile elements (a multiple of 64 lines,
// at least 64).
int64_t widen_tile(const Tensor& t, int64_t lines, int64_t length);
inline constexpr int64_t kWidenTile = 1 << 16;  // elements of one widened tile (256 KiB of fp32)

// Whether every element of `t` is finite.
bool all_finite(const Tensor& t);

// The elements of `t` (a 16-bit dtype's values) as bit patterns of t.dtype, and back.
std::vector<uint16_t> to_half_bits(const std::vector<float>& values, ir::DType dtype);
std::vector<float> from_half_bits(const std::vector<uint16_t>& bits, ir::DType dtype);

}  // namespace shardsynth::runtime
