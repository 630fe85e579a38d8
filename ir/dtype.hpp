#pragma once
// Element types of tensors, named as torch names them.
#include <cstdint>
#include <string>
#include <string_view>

namespace shardsynth::ir {

enum class DType { float32, float16, bfloat16, int64 };

// "torch.float32", as the graph table prints it.
std::string dtype_name(DType dtype);
// Accepts "float32" and "torch.float32" (and the other types likewise).
DType parse_dtype(std::string_view text);
// Bytes per element.
int64_t dtype_bytes(DType dtype);

}  // namespace shardsynth::ir
