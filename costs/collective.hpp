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

// The kinds that move bytes, listed once: in this order every byte table
// (shard-run's --check, its stage tables) prints them.
inline constexpr CollectiveKind kCommunicatingKinds[] = {CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                                                         CollectiveKind::all_reduce, CollectiveKind::all_to_all};

struct Collective {
  CollectiveKind kind = CollectiveKind::slice;  // what runs
  int mesh_axis = 0;                            // the mesh axis it runs over
  int src_dim = -1;  // spec dim (within the described dims) the axis leaves: all_gather, all_to_all
  int dst_dim = -1;  // spec dim the axis comes to: slice, all_to_all, reduce_scatter
  int64_t dst_blocks = 1;  // block count of dst_dim when this step is the first to shard it (spec.hpp)

  bool operator==(const Collective&) const = default;
};

std::string collective_name(CollectiveKind kind);
// "all_gather(axis 0, dim 1)" and the like.
std::string to_string(const Collective& c);

// The steps that turn `from` into `to` on `mesh`, in execution order. Axes
// within a dim are ordered (major first), so only the minor-most axis of a
// dim can leave it, and a new axis joins as the minor-most:
//  1. partial sums that `to` neither keeps nor scatters are all-reduced;
//  2. each dim sheds the axes beyond its common prefix with `to`, minor-most
//     first (a dim whose block count changes sheds all of them): an axis that
//     can join its target dim right away moves there by all-to-all, any other
//     is all-gathered;
//  3. each dim gains its missing axes in order: reduce-scatter for an axis that
//     is still partial, slice otherwise.
// Both specs must describe the same number of dims. Returns nullopt when `to`
// is unreachable (a partial sum cannot be created).
std::optional<std::vector<Collective>> plan_resharding(const ir::Spec& from, const ir::Spec& to, const ir::Mesh& mesh);

// The spec after applying one step.
ir::Spec apply(const Collective& step, const ir::Spec& spec);

}  // namespace shardsynth::costs
