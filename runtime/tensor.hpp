#pragma once
// A dense, row-major tensor held by one rank: a local shard or a whole
// tensor. Shared by every backend (the CUDA backend copies to and from it).
// Elements are held as fp32 values; a 16-bit dtype's values are ones that
// dtype represents exactly (runtime/half.hpp rounds them), and collectives
// move them as 16-bit patterns.
#include <cstdint>
#include <vector>

#include "ir/dtype.hpp"

namespace shardsynth::runtime {

struct Tensor {
  std::vector<int64_t> shape;  // extent of each dim, outermost first
  std::vector<float> data;     // row-major elements, size = product of shape
  ir::DType dtype = ir::DType::float32;  // the element type the values are rounded to and sent in

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;
  bool operator==(const Tensor&) const = default;
};

// A zero-filled tensor of `shape`.
Tensor zeros(std::vector<int64_t> shape);

// Part `index` of `parts` equal parts along `dim`. With `blocks` > 1 the dim
// is first cut into `blocks` equal blocks, and the result concatenates part
// `index` of every block (the layout of a blocked spec, ir/spec.hpp).
// Throws std::invalid_argument when the extent does not divide.
Tensor slice_part(const Tensor& t, int dim, int64_t parts, int64_t index, int64_t blocks = 1);

// Inverse of slice_part: concatenates `pieces` (part 0, 1, ... in order)
// along `dim`, interleaving per block when `blocks` > 1.
Tensor concat_parts(const std::vector<Tensor>& pieces, int dim, int64_t blocks = 1);

}  // namespace shardsynth::runtime
