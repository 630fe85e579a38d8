#include "runtime/tensor.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace shardsynth::runtime {
namespace {

// Elements before `dim` (outer), the dim's extent, and elements after it (inner).
struct Split3 {
  int64_t outer = 1;  // product of dims before
  int64_t extent = 1; // the dim
  int64_t inner = 1;  // product of dims after
};

Split3 split3(const std::vector<int64_t>& shape, int dim) {
  if (dim < 0 || dim >= static_cast<int>(shape.size())) throw std::invalid_argument("tensor dim " + std::to_string(dim) + " out of range");
  Split3 s;
  for (int d = 0; d < dim; ++d) s.outer *= shape[d];
  s.extent = shape[dim];
  for (std::size_t d = dim + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

// slice_part's copy on either storage: part `index` of `parts` of every block.
template <typename T>
void copy_part(const std::vector<T>& from, std::vector<T>& to, const Split3& s, int64_t parts, int64_t index,
               int64_t blocks) {
  const int64_t block = s.extent / blocks, piece = block / parts;
  T* dst = to.data();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t b = 0; b < blocks; ++b) {
      const T* src = from.data() + (o * s.extent + b * block + index * piece) * s.inner;
      dst = std::copy(src, src + piece * s.inner, dst);
    }
  }
}

// concat_parts's copy on either storage (`member`: Tensor::data or Tensor::bits).
template <typename T>
void copy_concat(const std::vector<Tensor>& pieces, std::vector<T> Tensor::*member, std::vector<T>& to, const Split3& s,
                 int64_t blocks) {
  const int64_t piece = s.extent / blocks;
  T* dst = to.data();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t b = 0; b < blocks; ++b) {
      for (const Tensor& p : pieces) {
        const T* src = (p.*member).data() + (o * s.extent + b * piece) * s.inner;
        dst = std::copy(src, src + piece * s.inner, dst);
      }
    }
  }
}

}  // namespace

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

Tensor zeros(std::vector<int64_t> shape) {
  Tensor t{std::move(shape), {}};
  t.data.assign(static_cast<std::size_t>(t.numel()), 0.0f);
  return t;
}

Tensor zeros(std::vector<int64_t> shape, ir::DType dtype) {
  Tensor t{std::move(shape), {}, dtype, {}};
  if (t.holds_bits()) {
    t.bits.assign(static_cast<std::size_t>(t.numel()), uint16_t{0});
  } else {
    t.data.assign(static_cast<std::size_t>(t.numel()), 0.0f);
  }
  return t;
}

int64_t held_bytes(const Tensor& t) {
  const int64_t per_value = t.dtype == ir::DType::int64 ? 8 : static_cast<int64_t>(sizeof(float));
  return static_cast<int64_t>(t.bits.size()) * 2 + static_cast<int64_t>(t.data.size()) * per_value;
}

Tensor slice_part(const Tensor& t, int dim, int64_t parts, int64_t index, int64_t blocks) {
  const Split3 s = split3(t.shape, dim);
  if (parts < 1 || blocks < 1 || s.extent % (parts * blocks) != 0 || index < 0 || index >= parts) {
    throw std::invalid_argument("cannot take part " + std::to_string(index) + " of " + std::to_string(parts) +
                                " (blocks " + std::to_string(blocks) + ") of extent " + std::to_string(s.extent));
  }
  std::vector<int64_t> shape = t.shape;
  shape[dim] = s.extent / parts;
  Tensor out = zeros(shape, t.dtype);
  if (t.holds_bits()) {
    copy_part(t.bits, out.bits, s, parts, index, blocks);
  } else {
    copy_part(t.data, out.data, s, parts, index, blocks);
  }
  return out;
}

Tensor concat_parts(const std::vector<Tensor>& pieces, int dim, int64_t blocks) {
  if (pieces.empty()) throw std::invalid_argument("concat_parts: no pieces");
  const Split3 s = split3(pieces[0].shape, dim);
  if (blocks < 1 || s.extent % blocks != 0) throw std::invalid_argument("concat_parts: extent does not split into blocks");
  for (const auto& p : pieces) {
    if (p.shape != pieces[0].shape) throw std::invalid_argument("concat_parts: pieces differ in shape");
    if (p.dtype != pieces[0].dtype) throw std::invalid_argument("concat_parts: pieces differ in dtype");
  }
  std::vector<int64_t> shape = pieces[0].shape;
  shape[dim] = s.extent * static_cast<int64_t>(pieces.size());
  Tensor out = zeros(shape, pieces[0].dtype);
  if (out.holds_bits()) {
    copy_concat(pieces, &Tensor::bits, out.bits, s, blocks);
  } else {
    copy_concat(pieces, &Tensor::data, out.data, s, blocks);
  }
  return out;
}

}  // namespace shardsynth::runtime
