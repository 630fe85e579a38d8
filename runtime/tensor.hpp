#pragma once
// A dense, row-major tensor held by one rank: a local shard or a whole
// tensor. Shared by every backend (the CUDA backend copies to and from it).
// float32 (and int64 token ids, exact integers) hold fp32 elements in
// `data`; bfloat16 and float16 hold their 16-bit patterns in `bits`
// (runtime/half.hpp converts), 2 bytes an element as the model counts them.
// Kernels read 16-bit operands widened to fp32 (runtime/fp32_operands.hpp)
// and their results are rounded once into 16-bit storage.
#include <cstdint>
#include <vector>

#include "ir/dtype.hpp"

namespace shardsynth::runtime {

struct Tensor {
  std::vector<int64_t> shape;  // extent of each dim, outermost first
  std::vector<float> data;     // row-major fp32 elements (float32, int64); empty for a 16-bit dtype
  ir::DType dtype = ir::DType::float32;  // the element type; bfloat16/float16 keep their elements in `bits`
  std::vector<uint16_t> bits;  // row-major 16-bit patterns of a bfloat16/float16 tensor; empty otherwise

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;
  // Whether the elements are 16-bit patterns in `bits` (dtype bfloat16 or float16).
  bool holds_bits() const { return dtype == ir::DType::bfloat16 || dtype == ir::DType::float16; }
  bool operator==(const Tensor&) const = default;
};

// A zero-filled float32 tensor of `shape`.
Tensor zeros(std::vector<int64_t> shape);
// A zero-filled tensor of `shape` and `dtype`, in that dtype's storage (+0 is all-zero bits in every dtype).
Tensor zeros(std::vector<int64_t> shape, ir::DType dtype);

// Bytes the elements of `t` take in this process: 2 an element in `bits`,
// 4 in `data`; int64 ids count 8, as the model counts them (held as fp32).
int64_t held_bytes(const Tensor& t);

// Part `index` of `parts` equal parts along `dim`. With `blocks` > 1 the dim
// is first cut into `blocks` equal blocks, and the result concatenates part
// `index` of every block (the layout of a blocked spec, ir/spec.hpp).
// Throws std::invalid_argument when the extent does not divide.
Tensor slice_part(const Tensor& t, int dim, int64_t parts, int64_t index, int64_t blocks = 1);

// Inverse of slice_part: concatenates `pieces` (part 0, 1, ... in order)
// along `dim`, interleaving per block when `blocks` > 1.
Tensor concat_parts(const std::vector<Tensor>& pieces, int dim, int64_t blocks = 1);

}  // namespace shardsynth::runtime
