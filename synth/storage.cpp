#include "synth/storage.hpp"

#include <algorithm>

namespace shardsynth::synth {

ir::Spec shard_unused_axes(const ir::Spec& use, const std::vector<int64_t>& shape, const ir::Mesh& mesh) {
  ir::Spec out = use;
  std::vector<bool> taken(mesh.rank(), false);
  for (const auto& axes : use.dims) {
    for (int a : axes) taken[a] = true;
  }
  for (int a : use.partial) taken[a] = true;
  const std::size_t offset = shape.size() - static_cast<std::size_t>(out.rank());
  for (int axis = 0; axis < mesh.rank(); ++axis) {
    if (taken[axis] || mesh.shape[axis] == 1) continue;
    const auto local = ir::local_shape(shape, out, mesh);
    for (int d = 0; d < out.rank(); ++d) {
      const int64_t per_block = local[offset + d] / out.blocks_of(d);
      if (per_block % mesh.shape[axis] != 0) continue;
      out.dims[d].push_back(axis);
      break;
    }
  }
  return out;
}

std::vector<StorageChoice> storage_choices(const ir::Spec& use, const std::vector<int64_t>& shape, const ir::Mesh& mesh) {
  const ir::Spec z = shard_unused_axes(use, shape, mesh);
  if (z == use) return {{{use, use, use}, use, 0, true}};
  return {{{use, use, use}, use, 0, false},
          {{use, use, z}, use, 1, false},
          {{use, z, z}, use, 2, false},
          {{z, z, z}, use, 3, false}};
}

}  // namespace shardsynth::synth
