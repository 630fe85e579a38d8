#pragma once
// What one op's sharding and one operand edge cost, in inference or in
// training. The cost model prices the pieces; this file decides which pieces
// a choice pays for.
//
// Inference: an op pays its compute (forward flops split over the shards of
// its iteration space) and, when the model resolves partial results inside
// the op, that resolution; an edge pays the resharding from the producer's
// output spec to the spec the consumer reads.
//
// Training adds the backward pass:
//  - compute: 2x the forward compute;
//  - each operand's gradient comes out partial on every mesh axis that shards
//    a factor the operand lacks (the backward einsum contracts over it); an
//    activation edge pays the resharding of that gradient (operand spec plus
//    those partial axes) back to the producer's output spec, which is the dual
//    of the forward collective (all-gather for a slice, reduce-scatter for an
//    all-gather of a partial gradient, and Megatron's backward all-reduce for
//    a replicated input to a column-parallel layer);
//  - a parameter's gradient in `params` is resolved to the parameter's own
//    spec: the all-reduce over every axis on which the parameter is
//    replicated while its op's data is sharded (data-parallel gradient
//    sync). Lowering passes the tied uses only: an untied parameter's
//    gradient goes to its storage (costs/param_storage.hpp);
//  - resolving a partial result inside the op has a free backward (the
//    gradient of a sum is the replicated gradient), unless the resolution
//    also moved dims (a reduce-scatter): then the output's gradient is
//    resharded back to the result's dims;
//  - an operand read as a partial sum gets a gradient that is not partial on
//    those axes (every summand's gradient is the output's);
//  - a parameter tied to another (GPT-2's lm_head to wte) is priced by
//    tied_param_cost: the update lives with the parameter it is tied to.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/precision.hpp"

namespace shardsynth::costs {

enum class Mode { inference, training };

// "inference" / "training"; throws ir::InputError naming anything else.
Mode parse_mode(std::string_view text);
std::string mode_name(Mode mode);

// One tensor an op reads, as a strategy reads it.
struct OperandUse {
  ir::TensorType type;            // global type
  ir::Spec spec;                  // spec the op reads it in
  std::vector<int> grad_partial;  // mesh axes its gradient comes out partial on (training)
};

// When a move runs within a training step.
enum class Phase { forward, backward, optimizer };

// One resharding a choice pays for: `type` laid out as `from` becomes `to`
// (costs::plan_resharding's steps, each priced on the spec it sees). The
// cost functions below are the sums of their choice's moves, so a list of
// moves is also what a run that executes the plan must send
// (synth/collective_ledger.hpp).
struct Move {
  ir::TensorType type;  // global type of the tensor moved
  ir::Spec from;        // its spec before
  ir::Spec to;          // its spec after
  Phase phase = Phase::forward;  // when it runs
};

// The sum of the moves' prices; nullopt when one is unreachable.
std::optional<int64_t> moves_cost(const CostModel& model, const std::vector<Move>& moves, const ir::Mesh& mesh);

struct OpCost {
  int64_t compute = 0;    // forward (and in training backward) compute
  int64_t resolve = 0;    // in-op resolution of a partial result
  int64_t grad_sync = 0;  // parameter gradient resolution (training)
  int64_t recompute = 0;  // training: the forward's compute and resolution again, for an output recomputed in the backward
  int64_t exchange = 0;   // rows' statistics exchanged inside a normalizing op (costs/row_exchange.hpp)

  int64_t total() const { return compute + resolve + grad_sync + recompute + exchange; }
};

// `shards` is the number of pieces the op's iteration space is split into.
// `params` are the op's parameter uses; `result` is the locally computed spec
// and `output` the spec handed on. Returns nullopt when a resolution is
// unreachable.
std::optional<OpCost> op_cost(const CostModel& model, Mode mode, double forward_flops, int64_t shards,
                              const ir::TensorType& result_type, const ir::Spec& result, const ir::Spec& output,
                              const std::vector<OperandUse>& params, const ir::Mesh& mesh);

// The moves op_cost prices in `resolve` and `grad_sync`.
std::vector<Move> op_moves(Mode mode, const ir::TensorType& result_type, const ir::Spec& result, const ir::Spec& output,
                           const std::vector<OperandUse>& params);

// The moves edge_cost prices.
std::vector<Move> edge_moves(Mode mode, const ir::Spec& produced, const OperandUse& use, bool needs_grad);

// Cost of feeding a tensor produced in `produced` to a consumer reading it as
// `use`; `needs_grad` is false for tensors no gradient flows to (graph inputs,
// integer tensors). Returns nullopt when unreachable.
std::optional<int64_t> edge_cost(const CostModel& model, Mode mode, const ir::Spec& produced, const OperandUse& use,
                                 bool needs_grad, const ir::Mesh& mesh);

// Cost, per training step, of a parameter used in `use` that is tied to one
// stored in `stored`: the stored parameter is resharded to the use's spec
// for the use's forward and again for its backward (the copy is held only
// around each use, as a gathered parameter is), and the use's resolved
// gradient goes back to the stored spec (in the policy's reduce dtype), where
// it joins the stored parameter's gradient. Inference reads both from the
// same weights: 0. Returns nullopt when unreachable.
std::optional<int64_t> tied_param_cost(const CostModel& model, Mode mode, const ir::TensorType& type,
                                       const ir::Spec& stored, const ir::Spec& use, const ir::Mesh& mesh,
                                       const PrecisionPolicy& policy = {});

// The moves tied_param_cost prices.
std::vector<Move> tied_param_moves(Mode mode, const ir::TensorType& type, const ir::Spec& stored, const ir::Spec& use,
                                   const PrecisionPolicy& policy = {});

// Bytes one device holds for a parameter: the shard, plus in training its
// gradient (in the policy's reduce dtype) and the optimizer state (Adam's two
// moments and, when the parameter is not in the master dtype, the master
// copy: costs/precision.hpp).
int64_t param_bytes(Mode mode, const ir::TensorType& type, const ir::Spec& spec, const ir::Mesh& mesh,
                    const PrecisionPolicy& policy = {});
// Bytes one device holds for an activation shard.
int64_t activation_bytes(const ir::TensorType& type, const ir::Spec& spec, const ir::Mesh& mesh);

}  // namespace shardsynth::costs
