#include <stdexcept>
#include <string>
#include <vector>

#include "ir/tensor.hpp"
#include "runtime/kernels.hpp"
#include "runtime/kernels_backward.hpp"

namespace shardsynth::runtime {

Tensor view_backward(const Tensor& dy, const std::vector<int64_t>& input_shape) { return view(dy, input_shape); }

Tensor permute_backward(const Tensor& dy, const std::vector<int64_t>& dims) {
  const int64_t rank = dy.rank();
  if (static_cast<int64_t>(dims.size()) != rank) throw std::invalid_argument("permute backward: dims do not match the rank");
  // The forward's output dim i is its input dim dims[i], so input dim dims[i] is output dim i.
  std::vector<int64_t> inverse(rank, -1);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t d = dims[i] < 0 ? dims[i] + rank : dims[i];
    if (d < 0 || d >= rank || inverse[d] >= 0) throw std::invalid_argument("permute backward: dims are not a permutation");
    inverse[d] = i;
  }
  return permute(dy, inverse);
}

Tensor transpose_backward(const Tensor& dy, int64_t d0, int64_t d1) { return transpose(dy, d0, d1); }

Tensor split_backward(const Tensor& dy, const std::vector<int64_t>& input_shape, int64_t dim, int64_t sections,
                      int64_t index) {
  const int rank = static_cast<int>(input_shape.size());
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank || sections < 1 || index < 0 || index >= sections) {
    throw std::invalid_argument("split backward: part " + std::to_string(index) + " of " + std::to_string(sections) +
                                " along dim " + std::to_string(dim) + " of " + ir::shape_string(input_shape));
  }
  std::vector<int64_t> part_shape = input_shape;
  part_shape[d] /= sections;
  if (dy.shape != part_shape || part_shape[d] * sections != input_shape[d]) {
    throw std::invalid_argument("split backward: output gradient " + ir::shape_string(dy.shape) + " is not part of " +
                                std::to_string(sections) + " of " + ir::shape_string(input_shape));
  }
  std::vector<Tensor> parts(sections, zeros(part_shape));
  parts[index] = dy;
  return concat_parts(parts, static_cast<int>(d));
}

Tensor repeat_kv_backward(const Tensor& dy, int64_t kv_heads) {
  if (dy.rank() < 3 || kv_heads < 1 || dy.shape[dy.rank() - 3] % kv_heads != 0) {
    throw std::invalid_argument("repeat_kv_backward: dy's heads are no multiple of " + std::to_string(kv_heads));
  }
  const int64_t rep = dy.shape[dy.rank() - 3] / kv_heads;
  const int64_t head = dy.shape[dy.rank() - 2] * dy.shape.back();  // elements per head
  std::vector<int64_t> shape = dy.shape;
  shape[dy.rank() - 3] = kv_heads;
  Tensor dx = zeros(shape);
  const int64_t kv_total = head == 0 ? 0 : dx.numel() / head;  // KV heads over every leading entry
  for (int64_t k = 0; k < kv_total; ++k) {
    for (int64_t r = 0; r < rep; ++r) {
      const float* src = dy.data.data() + (k * rep + r) * head;
      for (int64_t e = 0; e < head; ++e) dx.data[k * head + e] += src[e];
    }
  }
  return dx;
}

}  // namespace shardsynth::runtime
