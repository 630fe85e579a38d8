#pragma once
// One forward pass of a graph under a schedule on this rank: the engine
// behind run_sharded (runtime/executor.hpp) and the training step
// (runtime/training.hpp).
//
// Every rank runs the ops in topological order on local shards. At each op
// boundary it applies the schedule's syncs: a fwd_pre sync reshards an input
// before the op; a fwd_post sync whose source is partial resolves the op's
// own partial result; one whose source is the op's output spec reshards the
// tensor on its way to the graph output. An operand without a sync is read in
// its producer's spec. Every resharding runs the cost model's plan through a
// PricedResharder, which counts the ring bytes the cost model predicts for
// the same steps.
//
// With `keep` (training), every value and every op's call (operands as
// read, result) stays for a backward pass, except that a checkpointed op's
// (the schedule's `checkpoint` directives) is dropped after its last forward
// read and made again by recompute() before the backward needs it
// (ir/recompute_segments.hpp says when); without `keep` a value is dropped
// after its last use. A training pass takes each op's parameters from its
// ParamUses just before the op and gives them back right after it: a
// parameter stored in another spec than its use's is gathered for the op
// alone, and gathered again for its backward, not kept in the saved call.
// With a memory ledger (runtime/memory_ledger.hpp) the ledger frees values
// instead, at the end of their planned intervals, and is told each forward
// step, each value and parameter held and read, and the transient buffers
// (resharded operands, partial results, a tied parameter's copy in
// inference; with keep, those saved for the backward).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "costs/collective.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"
#include "ir/spec.hpp"
#include "runtime/communicator.hpp"
#include "runtime/memory_ledger.hpp"
#include "runtime/reference.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// Reshards local shards by costs::plan_resharding and counts, per collective
// kind, the ring bytes the cost model predicts for each step it runs.
class PricedResharder {
 public:
  PricedResharder(const ir::Mesh& mesh, Communicator& comm) : mesh_(mesh), comm_(comm) {}
  // This rank's shard of `type` moved from `from` to `to`. Throws
  // std::invalid_argument when `to` is unreachable.
  Tensor move(const Tensor& local, const ir::TensorType& type, const ir::Spec& from, const ir::Spec& to);
  // Ring bytes predicted so far, per kind.
  const std::map<costs::CollectiveKind, int64_t>& predicted() const { return predicted_; }
  const ir::Mesh& mesh() const { return mesh_; }
  Communicator& comm() { return comm_; }

 private:
  const ir::Mesh& mesh_;
  Communicator& comm_;
  std::map<costs::CollectiveKind, int64_t> predicted_;  // per kind: the cost model's ring bytes of the steps run
};

// A schedule's specs and syncs, parsed once.
struct PlanSpecs {
  std::map<std::string, ir::Spec> specs;                                       // tensor name -> spec
  std::map<std::pair<std::string, int>, std::pair<ir::Spec, ir::Spec>> pre;   // (node, arg) -> fwd_pre from, to
  std::map<std::string, std::vector<std::pair<ir::Spec, ir::Spec>>> post;     // node -> fwd_post (from, to), in order
  std::set<std::string> recompute;  // nodes whose outputs are recomputed for the backward (checkpoint directives)

  // The spec of tensor `name`; throws std::invalid_argument when it has none.
  const ir::Spec& of(const std::string& name) const;
  // The spec node `name` computes in: its output spec, or the partial source
  // of the fwd_post that resolves it.
  ir::Spec result_of(const std::string& name) const;
};

// Throws std::invalid_argument for a sync on an unknown node or one whose
// text is not FROM->TO, and for a checkpoint on a node whose output may not
// be recomputed (ir::may_recompute).
PlanSpecs parse_plan(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule);
// Every tensor of `graph` replicated, no syncs: the unsharded plan.
PlanSpecs replicated_plan(const ir::Graph& graph);

// What one op's forward call saw, kept for its backward (its parameters are
// not: the backward takes them again from its ParamUses).
struct SavedOp {
  std::vector<Tensor> inputs;           // tensor operands as the op read them (after fwd_pre syncs)
  std::vector<ir::Spec> input_specs;    // the spec each operand was read in
  ir::Spec result;                      // the spec the kernel computed in (partial before a fwd_post resolves it)
  Tensor output;                        // the kernel's local result, in `result`
  std::vector<int64_t> out_shape;       // KernelCall::out_shape
  std::vector<int64_t> in_offsets;      // KernelCall::in_offsets
  std::vector<int64_t> weight_offsets;  // KernelCall::weight_offsets
  bool leader = true;                   // whether this rank adds the parameters that the op does not contract to a partial result
};

// The KernelCall that `saved` records for `node`, reading `params` (node.params order).
KernelCall saved_call(const ir::Node& node, const SavedOp& saved, const std::vector<const Tensor*>& params);

// KernelCall::exchange for op v read as `saved` records: when the op
// normalizes over a factor (ir::OpKindInfo::normalized) that its first
// operand's spec shards, the all-gather of the rows' statistics among those
// shards (costs/row_exchange.hpp) through `resharder`, which counts its bytes
// as the cost model prices them; else empty.
std::function<Tensor(const Tensor&)> row_exchange_hook(const ir::Graph& graph, ir::Vertex v, const SavedOp& saved,
                                                       PricedResharder& resharder);

// What op v's kernel reads for its parameters, given each use's local shard
// (`uses`, node.params order): the shards themselves, but that a rank which
// is not the leader of a partial result (`leader` false) reads a parameter
// the op adds rather than contracts (a bias) as zeros, a copy in `zeroed`.
std::vector<const Tensor*> kernel_params(const ir::Graph& graph, ir::Vertex v, const std::vector<const Tensor*>& uses,
                                         bool leader, std::vector<Tensor>& zeroed);

// Where a training pass reads each parameter use in its use's spec
// (TrainingState): the stored shard itself when the use reads it as
// stored, else a copy made when the op takes it (a gather under
// ZeRO-3/FSDP; a tied use's copy) and freed when the op gives it back.
class ParamUses {
 public:
  virtual ~ParamUses() = default;
  // Parameter `p` of op `node`, this rank's shard in the use's spec: valid until give_back(node).
  virtual const Tensor& take(const ir::Node& node, const ir::Param& p) = 0;
  // The op's forward, recomputation or backward is done with its parameters: frees the copies take made.
  virtual void give_back(const ir::Node& node) = 0;
};

// Where a forward pass takes its parameters and inputs from.
struct ForwardSources {
  uint64_t seed = 0;                                       // seeds what is not given
  const std::map<std::string, Tensor>* params = nullptr;   // whole parameters by full (or tied-to) name
  const std::map<std::string, Tensor>* inputs = nullptr;   // whole inputs by placeholder name
  const std::map<std::string, Tensor>* local_inputs = nullptr;  // local shards of inputs by placeholder name
  ParamUses* param_uses = nullptr;  // training: each op's parameters in their use's spec, taken around the op
};

class ForwardPass {
 public:
  // With `keep`, `sources.param_uses` must be given (the backward takes the parameters from it again).
  ForwardPass(const ir::Graph& graph, const PlanSpecs& plan, PricedResharder& resharder,
              const std::map<std::string, KernelFn>& kernels, ForwardSources sources, bool keep);
  // Runs every node; afterwards value() holds the output nodes (every node
  // with keep, but the checkpointed ones).
  void run();
  // With keep: runs checkpointed op v's forward again (its operands must be
  // held: kept, or recomputed before it), restoring its value and saved call
  // with the same resharding and resolution as the first time.
  void recompute(ir::Vertex v);
  // Node `name`'s local value in its spec.
  const Tensor& value(const std::string& name) const { return values_.at(name); }
  // Placeholder `name`'s whole value (given or seeded).
  const Tensor& whole_input(const std::string& name) const { return whole_inputs_.at(name); }
  // With keep: op `name`'s saved call (absent for placeholders).
  const SavedOp* saved(const std::string& name) const;
  // Holds and frees what the plan says through `ledger` (before run(); it must outlive the run).
  void set_ledger(MemoryLedger* ledger) { ledger_ = ledger; }
  ~ForwardPass();
  ForwardPass(const ForwardPass&) = delete;
  ForwardPass& operator=(const ForwardPass&) = delete;

 private:
  void step(ir::Vertex v);
  Tensor local_param(const ir::Node& node, const ir::Param& p, const std::vector<int>& coords) const;
  // Keeps node `node`'s local value, held in the ledger when there is one.
  void store(const ir::Node& node, Tensor value);
  // Inference with a ledger: reads parameter p's stored shard and holds its local shard `local` as planned
  // (adding a tied use's copy to `scratch`).
  void hold_param(const ir::Node& node, const ir::Param& p, const Tensor& local, int64_t& scratch);
  // Frees node `name`'s value and saved call (the ledger's release).
  void release(const std::string& name);

  const ir::Graph& graph_;
  const PlanSpecs& plan_;
  PricedResharder& resharder_;
  const std::map<std::string, KernelFn>& kernels_;  // op kind -> the backend's kernel
  ForwardSources sources_;
  bool keep_;                                    // whether values and calls stay for a backward pass
  std::map<std::string, Tensor> values_;         // node -> local value in its spec, while still used
  std::map<std::string, Tensor> whole_inputs_;   // placeholder -> its whole value
  std::map<std::string, SavedOp> saved_;         // op -> its call, with keep
  MemoryLedger* ledger_ = nullptr;               // the plan's memory ledger, when one is tracked
  std::map<std::string, Tensor> held_params_;    // inference with a ledger: "node.param" -> its shard, as planned
  std::map<std::string, int64_t> saved_extra_;   // with keep and a ledger: op -> bytes its call saved beyond planned tensors
  int64_t saved_transient_ = 0;                  // the sum of saved_extra_
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // false once destroyed (the ledger may outlive it)
};

// Global index of this rank's first element along each tensor dim under
// `spec` (-1 on a blocked dim, where the shard is not one run).
std::vector<int64_t> shard_offsets(const std::vector<int64_t>& shape, const ir::Spec& spec, const ir::Mesh& mesh,
                                   const std::vector<int>& coords);

// Whether the rank at `coords` is at coordinate 0 of every axis in `partial`.
bool partial_leader(const std::vector<int>& partial, const std::vector<int>& coords);

// Per parameter of v (node.params order): whether the op contracts it over a
// reduction factor (a weight) rather than adding it (a bias).
std::vector<bool> contracted_params(const ir::Graph& graph, ir::Vertex v);

}  // namespace shardsynth::runtime
