#include "ir/spec.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "ir/error.hpp"

namespace shardsynth::ir {
namespace {

std::string axes_text(const std::vector<int>& axes, int mesh_rank) {
  if (mesh_rank == 1) return "";
  std::string text;
  for (int axis : axes) text += std::to_string(axis);
  return text;
}

// Reads the axis digits after an S or P at text[pos]; advances pos.
std::vector<int> read_axes(std::string_view text, std::size_t& pos, int mesh_rank, const std::string& quoted) {
  std::vector<int> axes;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    int axis = text[pos] - '0';
    if (axis >= mesh_rank) {
      throw InputError("bad spec " + quoted + ": mesh axis " + std::to_string(axis) + " does not exist on a " +
                       std::to_string(mesh_rank) + "-D mesh");
    }
    axes.push_back(axis);
    ++pos;
  }
  if (axes.empty()) {
    if (mesh_rank != 1) throw InputError("bad spec " + quoted + ": S and P need mesh axes (S0, P1) on an N-D mesh");
    axes.push_back(0);
  }
  return axes;
}

}  // namespace

bool Spec::is_replicated() const {
  return partial.empty() && std::all_of(dims.begin(), dims.end(), [](const auto& axes) { return axes.empty(); });
}

void Spec::set_blocks(int dim, int64_t count) {
  if (blocks.empty()) {
    if (count == 1) return;
    blocks.assign(dims.size(), 1);
  }
  blocks[dim] = count;
  if (std::all_of(blocks.begin(), blocks.end(), [](int64_t b) { return b == 1; })) blocks.clear();
}

Spec without_partial(Spec spec) {
  spec.partial.clear();
  return spec;
}

Spec replicated(int rank) { return Spec{std::vector<std::vector<int>>(rank), {}, {}}; }

std::string to_string(const Spec& spec, int mesh_rank) {
  std::string text;
  for (int d = 0; d < spec.rank(); ++d) {
    const auto& axes = spec.dims[d];
    text += axes.empty() ? "R" : "S" + axes_text(axes, mesh_rank);
    if (spec.blocks_of(d) != 1) text += "(" + std::to_string(spec.blocks_of(d)) + ")";
  }
  if (!spec.partial.empty()) text += "+P" + axes_text(spec.partial, mesh_rank);
  return text;
}

Spec parse_spec(std::string_view text, int mesh_rank) {
  const std::string quoted = "'" + std::string(text) + "'";
  Spec spec;
  std::vector<std::pair<std::size_t, int64_t>> blocks_at;  // (dim, count) of blocked dims
  std::vector<bool> used(mesh_rank, false);
  auto claim = [&](const std::vector<int>& axes) {
    for (int axis : axes) {
      if (used[axis]) throw InputError("bad spec " + quoted + ": mesh axis " + std::to_string(axis) + " used twice");
      used[axis] = true;
    }
  };
  std::size_t pos = 0;
  while (pos < text.size() && text[pos] != '+') {
    char c = text[pos++];
    if (c == 'R') {
      spec.dims.emplace_back();
    } else if (c == 'S') {
      spec.dims.push_back(read_axes(text, pos, mesh_rank, quoted));
      claim(spec.dims.back());
      if (pos < text.size() && text[pos] == '(') {
        const std::size_t close = text.find(')', pos);
        int64_t count = 0;
        auto [ptr, ec] = std::from_chars(text.data() + pos + 1, text.data() + (close == std::string_view::npos ? pos + 1 : close), count);
        if (close == std::string_view::npos || ec != std::errc() || ptr != text.data() + close || count < 2) {
          throw InputError("bad spec " + quoted + ": expected a block count of at least 2 in ( )");
        }
        blocks_at.emplace_back(spec.dims.size() - 1, count);
        pos = close + 1;
      }
    } else {
      throw InputError("bad spec " + quoted + ": unexpected '" + std::string(1, c) + "'");
    }
  }
  if (pos < text.size()) {
    if (pos + 1 >= text.size() || text[pos + 1] != 'P') throw InputError("bad spec " + quoted + ": expected +P after the dims");
    pos += 2;
    spec.partial = read_axes(text, pos, mesh_rank, quoted);
    claim(spec.partial);
    if (pos != text.size()) throw InputError("bad spec " + quoted + ": trailing characters after the partial axes");
    std::sort(spec.partial.begin(), spec.partial.end());
  }
  for (auto [dim, count] : blocks_at) spec.set_blocks(static_cast<int>(dim), count);
  return spec;
}

Spec permute(const Spec& spec, const std::vector<int>& perm) {
  Spec out{{}, spec.partial, {}};
  for (int source : perm) out.dims.push_back(spec.dims.at(source));
  for (std::size_t d = 0; d < perm.size(); ++d) out.set_blocks(static_cast<int>(d), spec.blocks_of(perm[d]));
  return out;
}

std::vector<int64_t> local_shape(const std::vector<int64_t>& shape, const Spec& spec, const Mesh& mesh) {
  if (spec.rank() > static_cast<int>(shape.size())) {
    throw InputError("spec " + to_string(spec, mesh.rank()) + " describes more dims than shape " + shape_string(shape));
  }
  std::vector<int64_t> local = shape;
  const std::size_t offset = shape.size() - spec.dims.size();
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    int64_t parts = 1;
    for (int axis : spec.dims[d]) parts *= mesh.shape.at(axis);
    if (local[offset + d] % (parts * spec.blocks_of(static_cast<int>(d))) != 0) {
      throw InputError("dim " + std::to_string(offset + d) + " of shape " + shape_string(shape) + " does not divide by " +
                       std::to_string(parts) + " devices for spec " + to_string(spec, mesh.rank()));
    }
    local[offset + d] /= parts;
  }
  return local;
}

}  // namespace shardsynth::ir
