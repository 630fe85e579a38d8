#pragma once
// The storage choices of a parameter in training (costs/param_storage.hpp):
// where its shard, gradient and optimizer state live between steps, given a
// spec its op reads it in.
//
// For a use spec U, let Z(U) be U with every mesh axis U leaves unused
// appended to a dim (the first whose local extent divides by the axis; an
// axis no dim takes stays unused): the spec that shards the parameter over
// the axes that carry only data parallelism for its op. The choices are
//   {U, U, U}        plain data parallelism (or tensor parallelism alone);
//   {U, U, Z}        ZeRO-1: gradient all-reduced, optimizer state sharded;
//   {U, Z, Z}        ZeRO-2: gradient reduce-scattered to the state shard;
//   {Z, Z, Z}        ZeRO-3/FSDP: everything sharded, gathered at each use;
// fewer when Z(U) = U. A storage problem node's strategies are these choices
// for every use spec its op may take; a choice made for use U prices any
// other use as forbidden (so the node follows its op's choice of U and adds
// the ZeRO stage to it).
#include <vector>

#include "costs/param_storage.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::synth {

// One storage choice and the use spec it serves.
struct StorageChoice {
  costs::ParamStorage storage;  // where the parameter, its gradient and its optimizer state live
  ir::Spec use;                 // the spec the op reads it in (U above)
  int stage = 0;                // the ZeRO stage it realizes: 0 (none), 1, 2 or 3
  bool only = false;            // Z(U) = U: the single choice, every stage at once

  // Whether it realizes ZeRO stage `want` (0: none).
  bool realizes(int want) const { return only || stage == want; }
};

// Z(U) above, for a parameter of global `shape`.
ir::Spec shard_unused_axes(const ir::Spec& use, const std::vector<int64_t>& shape, const ir::Mesh& mesh);

// The choices above for use spec `use` (no partial axes), plain data
// parallelism first.
std::vector<StorageChoice> storage_choices(const ir::Spec& use, const std::vector<int64_t>& shape, const ir::Mesh& mesh);

}  // namespace shardsynth::synth
