#include "ir/dtype.hpp"

#include <array>
#include <utility>

#include "ir/error.hpp"

namespace shardsynth::ir {
namespace {

struct DTypeInfo {
  DType dtype;             // the enumerator
  std::string_view name;   // torch's name without the "torch." prefix
  std::string_view alias;  // the short name practitioners write (--dtype bf16); empty = none
  int64_t bytes;           // bytes per element
  bool floating;           // a floating-point type (gradients flow through it)
  bool narrow_range;       // floating with a 5-bit exponent: gradients underflow without loss scaling
};

constexpr std::array<DTypeInfo, 4> kDTypes{{
    {DType::float32, "float32", "fp32", 4, true, false},
    {DType::float16, "float16", "fp16", 2, true, true},
    {DType::bfloat16, "bfloat16", "bf16", 2, true, false},
    {DType::int64, "int64", "", 8, false, false},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& entry : kDTypes) {
    if (entry.dtype == dtype) return entry;
  }
  throw std::logic_error("dtype missing from the dtype table");
}

}  // namespace

std::string dtype_name(DType dtype) { return "torch." + std::string(info(dtype).name); }

DType parse_dtype(std::string_view text) {
  std::string_view bare = text;
  if (bare.substr(0, 6) == "torch.") bare.remove_prefix(6);
  for (const auto& entry : kDTypes) {
    if (entry.name == bare || (!entry.alias.empty() && entry.alias == bare)) return entry.dtype;
  }
  throw InputError("unknown dtype '" + std::string(text) + "' (known: float32, float16, bfloat16, int64; or fp32, fp16, bf16)");
}

int64_t dtype_bytes(DType dtype) { return info(dtype).bytes; }

bool is_floating(DType dtype) { return info(dtype).floating; }

bool needs_loss_scaling(DType dtype) { return info(dtype).narrow_range; }

}  // namespace shardsynth::ir
