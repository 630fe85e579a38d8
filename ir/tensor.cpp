#include "ir/tensor.hpp"

#include <limits>

#include "ir/error.hpp"

namespace shardsynth::ir {

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t product = 1;
  for (int64_t extent : shape) {
    if (extent < 0) throw InputError("negative extent " + std::to_string(extent) + " in shape " + shape_string(shape));
    if (extent != 0 && product > std::numeric_limits<int64_t>::max() / extent) {
      throw InputError("shape " + shape_string(shape) + " has more elements than int64 can count");
    }
    product *= extent;
  }
  return product;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

}  // namespace shardsynth::ir
