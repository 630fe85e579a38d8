#pragma once
// How a parameter is kept between training steps, apart from the spec its op
// reads it in, and what that costs per step and in bytes.
//
// The parameter lives in `stored` and is moved to each use's spec before the
// forward pass and again before the backward pass (an all-gather when the
// use is less sharded: ZeRO-3/FSDP; free when they agree). The use's gradient
// (partial on the axes its op contracted it over) is reduced into `grad` in
// the policy's reduce dtype (costs/precision.hpp);
// `grad` is `stored` (all-reduce, ZeRO-1 and plain data parallelism) or
// `state` (reduce-scatter, ZeRO-2/3). The optimizer updates the `state`
// shard (Adam's two fp32 moments live there), and the updated shard is moved
// back to `stored` (an all-gather when `state` is more sharded). `state` and
// `grad` are `stored` with mesh axes added (slices away); the lowering picks
// among such choices (synth/storage.hpp).
#include <cstdint>
#include <optional>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"

namespace shardsynth::costs {

struct ParamStorage {
  ir::Spec stored;  // parameter shard kept between steps (no partial axes)
  ir::Spec grad;    // gradient buffer: `stored`, or `state` when reduce-scattered
  ir::Spec state;   // optimizer state and the shard the update runs on

  bool operator==(const ParamStorage&) const = default;
};

// Cost per training step of a parameter stored as `storage` and read by its
// op as `use` (spec and gradient partial axes): the forward and backward
// moves stored -> use, the gradient's reduction use+partial -> grad, the
// slice grad -> state, and the updated shard's move state -> stored (cast
// from the master copy to the parameter's dtype first). The reduction and
// the slice move the reduce dtype's bytes, the others the parameter's.
// Returns nullopt when a move is unreachable.
std::optional<int64_t> storage_cost(const CostModel& model, const ParamStorage& storage, const OperandUse& use,
                                    const ir::Mesh& mesh, const PrecisionPolicy& policy = {});

// The moves storage_cost prices, each with the phase it runs in: the gather
// before the forward and again before the backward, the reduction (backward),
// the slice and the move back (optimizer).
std::vector<Move> storage_moves(const ParamStorage& storage, const OperandUse& use, const PrecisionPolicy& policy = {});

struct StorageBytes {
  int64_t param = 0;  // bytes of the stored shard
  int64_t grad = 0;   // bytes of the gradient buffer (reduce dtype)
  int64_t state = 0;  // bytes of the optimizer state on the state shard: Adam's moments and any master copy

  int64_t total() const { return param + grad + state; }
};

// Bytes one device holds for a parameter stored as `storage` (training).
StorageBytes storage_bytes(const ir::TensorType& type, const ParamStorage& storage, const ir::Mesh& mesh,
                           const PrecisionPolicy& policy = {});

}  // namespace shardsynth::costs
