#pragma once
// Resharding as collectives: turning spec FROM into spec TO is a sequence of
// per-mesh-axis steps (DTensor's redistribute and XLA's resharding do the same).
#include <optional>
#include <string>
#include <vector>

#include "ir/mesh.hpp"
#include "ir/spec.hpp"

namespace shardsynth::costs {

enum class CollectiveKind {
  slice,           // keep the local part of a replicated dim: no communication
  all_gather,      // sharded dim -> replicated
  all_to_all,      // sharded on one dim -> sharded on another, same axis
  all_reduce,      // partial -> replicated
  reduce_scatter,  // partial -> sharded
};

struct Collective {
  CollectiveKind kind = CollectiveKind::slice;  // what runs
  int mesh_axis = 0;                            // the mesh axis it runs over
  int src_dim = -1;  // spec dim (within the described dims) the axis leaves: all_gather, all_to_all
  int dst_dim = -1;  // spec dim the axis comes to: slice, all_to_all, reduce_scatter

  bool operator==(const Collective&) const = default;
};

std::string collective_name(CollectiveKind kind);
// "all_gather(axis 0, dim 1)" and the like.
std::string to_string(const Collective& c);

// The steps that turn `from` into `to` on `mesh`, in execution order: partial
// sums are resolved first, then all-to-alls, all-gathers and slices, each over
// ascending mesh axes. Both specs must describe the same number of dims.
// Returns nullopt when `to` is unreachable (a partial sum cannot be created).
std::optional<std::vector<Collective>> plan_resharding(const ir::Spec& from, const ir::Spec& to, const ir::Mesh& mesh);

}  // namespace shardsynth::costs
