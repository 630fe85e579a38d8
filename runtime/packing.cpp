#include "runtime/packing.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace shardsynth::runtime {

std::vector<float> pack_parts(const Tensor& t, int dim, int64_t parts, int64_t blocks) {
  std::vector<float> out;
  out.reserve(t.data.size());
  for (int64_t j = 0; j < parts; ++j) {
    const Tensor part = slice_part(t, dim, parts, j, blocks);
    out.insert(out.end(), part.data.begin(), part.data.end());
  }
  return out;
}

Tensor unpack_parts(const std::vector<float>& buffer, const std::vector<int64_t>& piece_shape, int dim, int64_t parts,
                    int64_t blocks) {
  std::vector<Tensor> pieces;
  pieces.reserve(static_cast<std::size_t>(parts));
  for (int64_t j = 0; j < parts; ++j) pieces.push_back(zeros(piece_shape));
  const std::size_t n = pieces.empty() ? 0 : pieces[0].data.size();
  if (buffer.size() != n * static_cast<std::size_t>(parts)) {
    throw std::invalid_argument("unpack_parts: buffer of " + std::to_string(buffer.size()) + " elements is not " +
                                std::to_string(parts) + " pieces of " + std::to_string(n));
  }
  for (int64_t j = 0; j < parts; ++j) {
    std::copy_n(buffer.begin() + static_cast<std::ptrdiff_t>(j * n), n, pieces[j].data.begin());
  }
  return concat_parts(pieces, dim, blocks);
}

std::vector<int64_t> part_shape(std::vector<int64_t> shape, int dim, int64_t parts) {
  if (dim < 0 || dim >= static_cast<int>(shape.size()) || parts < 1 || shape[dim] % parts != 0) {
    throw std::invalid_argument("cannot split tensor dim " + std::to_string(dim) + " into " + std::to_string(parts) +
                                " parts");
  }
  shape[dim] /= parts;
  return shape;
}

}  // namespace shardsynth::runtime
