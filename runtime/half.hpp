#pragma once
// The 16-bit floating types on CPU ranks: bfloat16 and float16 as their bit
// patterns (uint16_t), converted from fp32 by rounding to nearest, ties to
// even, as torch's CPU casts do. A Tensor of a 16-bit dtype holds each
// element's value as an fp32 number the dtype represents exactly (so every
// fp32 kernel reads it unchanged, accumulating in fp32 as PyTorch's CPU
// kernels do); it travels and is saved as the 16-bit patterns.
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

// `t` with every element rounded to `dtype` and t.dtype set to it (for
// float32 and int64 only the label changes).
void round_in_place(Tensor& t, ir::DType dtype);
Tensor rounded(Tensor t, ir::DType dtype);

// The elements of `t` (a 16-bit dtype's values) as bit patterns of t.dtype, and back.
std::vector<uint16_t> to_half_bits(const std::vector<float>& values, ir::DType dtype);
std::vector<float> from_half_bits(const std::vector<uint16_t>& bits, ir::DType dtype);

}  // namespace shardsynth::runtime
