#include <algorithm>
#include <stdexcept>
#include <string>

#include "runtime/kernels.hpp"

namespace shardsynth::runtime {
namespace {

// A possibly negative dim as an index into a rank-`rank` shape.
int normalized(int64_t dim, int rank, const char* kind) {
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank) {
    throw std::invalid_argument(std::string(kind) + ": dim " + std::to_string(dim) + " out of range for rank " +
                                std::to_string(rank));
  }
  return static_cast<int>(d);
}

}  // namespace

Tensor view(const Tensor& x, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out_shape = shape;
  int64_t known = 1;
  int inferred = -1;
  for (std::size_t i = 0; i < out_shape.size(); ++i) {
    if (out_shape[i] == -1 && inferred < 0) {
      inferred = static_cast<int>(i);
    } else {
      known *= out_shape[i];
    }
  }
  if (inferred >= 0 && known != 0) out_shape[inferred] = x.numel() / known;
  Tensor out{out_shape, x.data};
  if (out.numel() != x.numel() || (inferred >= 0 && known == 0)) {
    throw std::invalid_argument("view: cannot reshape " + std::to_string(x.numel()) + " elements");
  }
  return out;
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  const int rank = x.rank();
  if (static_cast<int>(dims.size()) != rank) throw std::invalid_argument("permute: dims do not match the rank");
  std::vector<int> perm(rank);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    perm[i] = normalized(dims[i], rank, "permute");
    if (seen[perm[i]]) throw std::invalid_argument("permute: repeated dim");
    seen[perm[i]] = true;
  }
  std::vector<int64_t> out_shape(rank), in_stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * x.shape[d + 1];
  for (int i = 0; i < rank; ++i) out_shape[i] = x.shape[perm[i]];
  Tensor out = zeros(out_shape);
  std::vector<int64_t> idx(rank, 0);  // index into the output
  for (int64_t t = 0; t < out.numel(); ++t) {
    int64_t src = 0;
    for (int i = 0; i < rank; ++i) src += idx[i] * in_stride[perm[i]];
    out.data[t] = x.data[src];
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < out_shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  std::vector<int64_t> dims(x.rank());
  for (int i = 0; i < x.rank(); ++i) dims[i] = i;
  std::swap(dims[normalized(d0, x.rank(), "transpose")], dims[normalized(d1, x.rank(), "transpose")]);
  return permute(x, dims);
}

Tensor split(const Tensor& x, int64_t dim, int64_t sections, int64_t index) {
  if (sections < 1 || index < 0 || index >= sections) {
    throw std::invalid_argument("split: index " + std::to_string(index) + " of " + std::to_string(sections) +
                                " sections");
  }
  return slice_part(x, normalized(dim, x.rank(), "split"), sections, index);
}

Tensor repeat_kv(const Tensor& x, int64_t out_heads) {
  if (x.rank() < 3) throw std::invalid_argument("repeat_kv: needs a tensor of rank >= 3");
  const int64_t kv = x.shape[x.rank() - 3];
  if (kv < 1 || out_heads % kv != 0) {
    throw std::invalid_argument("repeat_kv: " + std::to_string(out_heads) + " heads are no multiple of " +
                                std::to_string(kv));
  }
  const int64_t rep = out_heads / kv;
  const int64_t head = x.shape[x.rank() - 2] * x.shape.back();  // elements per head
  std::vector<int64_t> shape = x.shape;
  shape[x.rank() - 3] = out_heads;
  Tensor out = zeros(shape);
  const int64_t groups = kv * head == 0 ? 0 : x.numel() / (kv * head);  // leading (batch) entries
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t k = 0; k < kv; ++k) {
      const float* src = x.data.data() + (g * kv + k) * head;
      for (int64_t r = 0; r < rep; ++r) {
        std::copy(src, src + head, out.data.data() + ((g * kv + k) * rep + r) * head);
      }
    }
  }
  return out;
}

}  // namespace shardsynth::runtime
