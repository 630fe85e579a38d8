#pragma once
// One rank's training state under a plan: its parameter shards, their
// gradients and the optimizer, with the forward and backward passes of one
// (micro-)batch. train_sharded (runtime/training.hpp) drives it for an
// intra-op plan; the staged runtime drives one per stage, over micro-batches.
//
// Use per optimizer step: begin_step(), then per micro-batch forward() and,
// later, backward() with the gradients of the pass's outputs, then
// end_step(). Gradients of every micro-batch add up.
//
// A use that reads its own parameter in the spec it is stored in reads the
// stored shard itself. Any other use (stored in another spec: ZeRO-3/FSDP;
// a tied use, always) gets its copy in the use's spec just before its op's
// forward, freed right after it, and again around the op's backward and a
// checkpointed op's recomputation, each a move from the stored shard
// (costs::storage_cost and costs::tied_param_cost price them). With a
// tracked ledger the copy is the planned tensor "node.param:gathered"
// (category transient) when the plan lists it, else transient bytes the
// model does not plan ("gathered parameters"), at those steps only; a
// recomputation's copy is always the latter (synth does not plan it).
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "runtime/communicator.hpp"
#include "runtime/loss.hpp"
#include "runtime/memory_ledger.hpp"
#include "runtime/forward_pass.hpp"
#include "runtime/optimizer.hpp"
#include "runtime/tensor.hpp"
#include "runtime/training.hpp"

namespace shardsynth::runtime {

// Adds `more` into `into` elementwise, each sum rounded to into.dtype; an
// empty `into` (no shape, no data) becomes a copy. Throws
// std::invalid_argument when the shapes differ.
void accumulate(Tensor& into, const Tensor& more);

class TrainingState final : private ParamUses {
 public:
  // Takes each stored parameter's shard from setup.params (whole, by full
  // name) or seeds it. Throws ir::InputError for a wrong shape or a bad
  // learning rate.
  TrainingState(const ir::Graph& graph, const ir::Mesh& mesh, const PlanSpecs& plan, Communicator& comm,
                const TrainSetup& setup);

  // Zeroes the gradients and, when memory is tracked, starts the step's ledger.
  void begin_step();
  // The forward pass of one micro-batch, kept for its backward: `inputs`
  // whole by placeholder name, `local_inputs` as local shards (received).
  std::unique_ptr<ForwardPass> forward(const std::map<std::string, Tensor>* inputs,
                                       const std::map<std::string, Tensor>* local_inputs);
  // The backward pass of `pass`. `output_grads`: per output node, the
  // gradient of its local value, in its spec without partial axes. Returns
  // the gradients of the placeholders in `wanted` (received activations),
  // each in its spec without partial axes and summed over its uses.
  // A checkpointed op's forward is run again in `pass` just before the
  // backward of its segment's last node (ir/recompute_segments.hpp).
  std::map<std::string, Tensor> backward(ForwardPass& pass, std::map<std::string, Tensor> output_grads,
                                         const std::set<std::string>& wanted = {});
  // The optimizer step on every parameter's state shard, which is then
  // moved back to its stored spec.
  void end_step();

  // The loss of `pass`'s output node `output`: an in-graph loss head's
  // value as the plan leaves it (whole), else the output gathered whole
  // outside the plan's bytes (`labels` whole for next_token, `seed` draws
  // the mse target). Sets grads[output] to `scale` times its gradient, in the
  // output's spec without partial axes; returns the loss.
  double take_loss(const ForwardPass& pass, const std::string& output, const LossChoice& choice, const Tensor* labels,
                   uint64_t seed, double scale, std::map<std::string, Tensor>& grads);

  // Full names of the parameters this state stores, in order.
  std::vector<std::string> stored_names() const;
  // Stored parameter `name`'s gradient (this step so far) gathered whole,
  // outside the plan's byte count.
  Tensor whole_grad(const std::string& name);
  // Adds `whole` (the parameter's shape) to parameter `name`'s gradient: this rank's slice of it.
  void add_to_grad(const std::string& name, const Tensor& whole);

  // Every stored parameter's gradient (this step so far) or value, gathered
  // whole, by full name. Outside the plan's byte count.
  std::map<std::string, Tensor> whole_grads();
  std::map<std::string, Tensor> whole_params();
  // `local` under `spec` gathered whole, outside the plan's byte count.
  Tensor gather(const Tensor& local, const ir::TensorType& type, const ir::Spec& spec);
  // float16 with loss scaling: the scaler (its scale and skipped steps); else null.
  const LossScaler* scaler() const { return scaler_ ? &*scaler_ : nullptr; }
  // Checkpointed op forwards run again so far (every backward's).
  int64_t recomputed() const { return recomputed_; }
  // Bytes sent for the plan: the communicator's count less gather()'s
  // (the loss's output, the checks' whole gradients and parameters).
  std::map<costs::CollectiveKind, int64_t> sent() const;
  // The cost model's ring bytes of every resharding run.
  const std::map<costs::CollectiveKind, int64_t>& predicted() const { return resharder_.predicted(); }
  PricedResharder& resharder() { return resharder_; }

  // From the next begin_step on, holds and frees the plan's tensors (the
  // schedule's memory "tensors") as planned and measures each step
  // (runtime/memory_ledger.hpp): one forward and backward per step.
  void track_memory(std::vector<ir::PlannedTensor> planned);
  // The measurement of the step that held the most, once a tracked step has ended.
  const std::optional<MemoryMeasured>& memory() const { return memory_; }

 private:
  // A parameter as training holds it: one per stored (not tied) parameter.
  // The schedule's storage entries (ir::kStoredSuffix...) say where; without
  // them it is stored, reduced and updated in its use's spec.
  struct Stored {
    ir::TensorType type;  // global type
    ir::Spec spec;        // the spec it is stored in between steps
    ir::Spec grad_spec;   // the spec its gradient is reduced into
    ir::Spec state_spec;  // the spec the optimizer updates it in (its Adam state's)
    std::string use;      // "node.param" of the use that stores it
    Tensor value;         // this rank's shard, in `spec`
    Tensor grad;          // this rank's shard of the step's gradient, in `grad_spec`, of dtype `grad_dtype`
    ir::DType grad_dtype = ir::DType::float32;  // the dtype its gradient is reduced and kept in
    Tensor master;        // a 16-bit parameter's fp32 master copy, in `state_spec`; empty otherwise
  };
  // The type `s`'s gradient is reduced in: its shape, the reduce dtype.
  static ir::TensorType grad_type(const Stored& s) { return {s.type.shape, s.grad_dtype}; }
  // The optimizer step of one stored parameter (`inverse_scale`: fp16's 1 / loss scale, else 1).
  void update(const std::string& name, Stored& s, float inverse_scale, bool skip);

  Stored& stored_for(const ir::Node& node, const ir::Param& p);
  // ParamUses: the use's shard, a copy moved from the stored one when the specs differ.
  const Tensor& take(const ir::Node& node, const ir::Param& p) override;
  void give_back(const ir::Node& node) override;
  // The full name stored_for's parameter is kept under.
  std::string stored_name(const ir::Node& node, const ir::Param& p) const;
  void backward_op(ir::Vertex v, const SavedOp& saved, Tensor grad_output, std::map<std::string, Tensor>& grads,
                   const std::set<std::string>& wanted);

  const ir::Graph& graph_;
  const ir::Mesh& mesh_;
  const PlanSpecs& plan_;
  Communicator& comm_;
  const TrainSetup& setup_;
  PricedResharder resharder_;
  Optimizer optimizer_;
  std::map<std::string, Stored> stored_;               // full parameter name -> its shard and gradient
  struct Gathered {
    Tensor value;           // the copy, in the use's spec
    int64_t unplanned = 0;  // its bytes when counted as unplanned transient (not the plan's ":gathered"), else 0
  };
  std::map<std::string, Gathered> gathered_;           // "node.param" -> its copy, while its op runs
  bool recomputing_ = false;                           // whether a checkpointed op's forward is running again
  int64_t unplanned_gathered_ = 0;                     // the sum of gathered_'s unplanned bytes
  std::map<costs::CollectiveKind, int64_t> excluded_;  // bytes sent outside the plan (gather()'s)
  int64_t recomputed_ = 0;                                   // op forwards run again so far
  std::map<int64_t, std::vector<ir::Vertex>> recompute_at_;  // topological position -> checkpointed ops recomputed
                                                             // before its backward, in forward order
  std::optional<std::vector<ir::PlannedTensor>> planned_;  // the plan's tensors, when tracked
  std::unique_ptr<MemoryLedger> ledger_;                 // this step's ledger, when tracked
  std::optional<MemoryMeasured> memory_;                 // the largest tracked step's measurement
  std::optional<LossScaler> scaler_;                     // float16 parameters: the dynamic loss scale
};

}  // namespace shardsynth::runtime
