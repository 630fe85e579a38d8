#include "ir/dtype.hpp"

#include <array>
#include <utility>

#include "ir/error.hpp"

namespace shardsynth::ir {
namespace {

struct DTypeInfo {
  DType dtype;            // the enumerator
  std::string_view name;  // torch's name without the "torch." prefix
  int64_t bytes;          // bytes per element
};

constexpr std::array<DTypeInfo, 4> kDTypes{{
    {DType::float32, "float32", 4},
    {DType::float16, "float16", 2},
    {DType::bfloat16, "bfloat16", 2},
    {DType::int64, "int64", 8},
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
    if (entry.name == bare) return entry.dtype;
  }
  throw InputError("unknown dtype '" + std::string(text) + "'");
}

int64_t dtype_bytes(DType dtype) { return info(dtype).bytes; }

}  // namespace shardsynth::ir
