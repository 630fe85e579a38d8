#pragma once
// Element types of tensors, named as torch names them.
#include <cstdint>
#include <string>
#include <string_view>

namespace shardsynth::ir {

enum class DType { float32, float16, bfloat16, int64 };

// "torch.float32", as the graph table prints it.
std::string dtype_name(DType dtype);
// Accepts "float32", "torch.float32" and the short names "fp32", "fp16" and
// "bf16"; throws InputError naming anything else.
DType parse_dtype(std::string_view text);
// Bytes per element.
int64_t dtype_bytes(DType dtype);
// Whether the type is floating point (int64 is not).
bool is_floating(DType dtype);
// Whether training in it needs loss scaling: a floating type whose exponent
// range is so narrow that small gradients underflow (float16's 5 bits).
bool needs_loss_scaling(DType dtype);

}  // namespace shardsynth::ir
