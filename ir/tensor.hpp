#pragma once
// A tensor's global type: its shape and element type.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.hpp"

namespace shardsynth::ir {

struct TensorType {
  std::vector<int64_t> shape;    // global extent of each dim, outermost first
  DType dtype = DType::float32;  // element type
};

// Product of the extents; throws InputError when it overflows int64.
int64_t num_elements(const std::vector<int64_t>& shape);
// "[8, 1024, 1024]", as torch.Size prints in the graph table.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace shardsynth::ir
