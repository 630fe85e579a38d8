#include "costs/collective.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace shardsynth::costs {
namespace {

// Where one mesh axis sits in a spec.
struct Place {
  int dim = -1;          // spec dim it shards, -1 = none
  bool partial = false;  // whether the spec is partial on it
};

Place place_of(const ir::Spec& spec, int axis) {
  Place p;
  for (int d = 0; d < spec.rank(); ++d) {
    const auto& axes = spec.dims[d];
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) p.dim = d;
  }
  p.partial = std::find(spec.partial.begin(), spec.partial.end(), axis) != spec.partial.end();
  return p;
}

}  // namespace

std::string collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::slice: return "slice";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
  }
  return "?";
}

std::string to_string(const Collective& c) {
  std::string text = collective_name(c.kind) + "(axis " + std::to_string(c.mesh_axis);
  if (c.src_dim >= 0) text += ", from dim " + std::to_string(c.src_dim);
  if (c.dst_dim >= 0) text += ", to dim " + std::to_string(c.dst_dim);
  return text + ")";
}

std::optional<std::vector<Collective>> plan_resharding(const ir::Spec& from, const ir::Spec& to, const ir::Mesh& mesh) {
  if (from.rank() != to.rank()) throw std::invalid_argument("plan_resharding: specs describe different ranks");
  std::vector<Collective> reduce, move, gather, slice;
  for (int axis = 0; axis < mesh.rank(); ++axis) {
    const Place a = place_of(from, axis);
    const Place b = place_of(to, axis);
    if (b.partial && !a.partial) return std::nullopt;
    if (a.partial && b.partial) {
      if (a.dim != b.dim) return std::nullopt;
      continue;
    }
    if (a.partial) {
      if (b.dim >= 0) {
        reduce.push_back({CollectiveKind::reduce_scatter, axis, -1, b.dim});
      } else {
        reduce.push_back({CollectiveKind::all_reduce, axis, -1, -1});
      }
      continue;
    }
    if (a.dim == b.dim) continue;
    if (a.dim >= 0 && b.dim >= 0) {
      move.push_back({CollectiveKind::all_to_all, axis, a.dim, b.dim});
    } else if (a.dim >= 0) {
      gather.push_back({CollectiveKind::all_gather, axis, a.dim, -1});
    } else {
      slice.push_back({CollectiveKind::slice, axis, -1, b.dim});
    }
  }
  std::vector<Collective> plan;
  for (auto* part : {&reduce, &move, &gather, &slice}) plan.insert(plan.end(), part->begin(), part->end());
  return plan;
}

}  // namespace shardsynth::costs
