#include "runtime/packing.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ir/error.hpp"
#include "runtime/half.hpp"

namespace shardsynth::runtime {

Tensor pack_parts(const Tensor& t, int dim, int64_t parts, int64_t blocks) {
  std::vector<Tensor> chunks;
  chunks.reserve(static_cast<std::size_t>(parts));
  for (int64_t j = 0; j < parts; ++j) {
    Tensor part = slice_part(t, dim, parts, j, blocks);
    part.shape = {1, part.numel()};
    chunks.push_back(std::move(part));
  }
  Tensor out = concat_parts(chunks, 0);
  out.shape = {t.numel()};
  return out;
}

Tensor unpack_parts(const Tensor& buffer, const std::vector<int64_t>& piece_shape, int dim, int64_t parts,
                    int64_t blocks) {
  int64_t n = 1;  // elements of a piece
  for (int64_t e : piece_shape) n *= e;
  if (buffer.numel() != n * parts) {
    throw std::invalid_argument("unpack_parts: buffer of " + std::to_string(buffer.numel()) + " elements is not " +
                                std::to_string(parts) + " pieces of " + std::to_string(n));
  }
  Tensor rows = buffer;
  rows.shape = {parts, n};
  std::vector<Tensor> pieces;
  pieces.reserve(static_cast<std::size_t>(parts));
  for (int64_t j = 0; j < parts; ++j) {
    Tensor piece = slice_part(rows, 0, parts, j);
    piece.shape = piece_shape;
    pieces.push_back(std::move(piece));
  }
  return concat_parts(pieces, dim, blocks);
}

int64_t wire_lanes(ir::DType dtype) {
  const int64_t bytes = ir::dtype_bytes(dtype);
  return bytes <= static_cast<int64_t>(sizeof(float)) ? 1 : bytes / static_cast<int64_t>(sizeof(float));
}

Tensor to_wire(const Tensor& t, ir::DType dtype) {
  const int64_t lanes = wire_lanes(dtype);
  if (lanes == 1) return is_half(dtype) ? rounded(t, dtype) : t;
  static_assert(sizeof(int64_t) == 2 * sizeof(float));
  if (dtype != ir::DType::int64) throw std::logic_error("to_wire: no lane layout for " + ir::dtype_name(dtype));
  std::vector<int64_t> shape = t.shape;
  shape.push_back(lanes);
  Tensor wire = zeros(std::move(shape));
  for (std::size_t i = 0; i < t.data.size(); ++i) {
    const auto value = static_cast<int64_t>(t.data[i]);
    std::memcpy(&wire.data[i * 2], &value, sizeof value);
  }
  return wire;
}

Tensor from_wire(const Tensor& wire, ir::DType dtype) {
  const int64_t lanes = wire_lanes(dtype);
  if (lanes == 1) return wire;
  if (wire.shape.empty() || wire.shape.back() != lanes) throw std::invalid_argument("from_wire: no trailing dim of lanes");
  Tensor t = zeros(std::vector<int64_t>(wire.shape.begin(), wire.shape.end() - 1));
  for (std::size_t i = 0; i < t.data.size(); ++i) {
    int64_t value = 0;
    std::memcpy(&value, &wire.data[i * 2], sizeof value);
    t.data[i] = static_cast<float>(value);
  }
  return t;
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
