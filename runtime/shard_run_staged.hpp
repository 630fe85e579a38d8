#pragma once
// Running a pipeline-staged schedule (ir/staged_schedule.hpp) on the mesh:
// stage s on the group at coordinate s of mesh axis 0, micro-batches streamed
// GPipe style (runtime/pipeline.hpp), forward only.
//
// Each stage runs ir::stage_graph(graph, stage.nodes) under its own Schedule
// on the group's sub-mesh with run_sharded, once per micro-batch. Its
// placeholders are either model inputs (the node is one of the stage's
// nodes: seeded per micro-batch, see micro_batch_inputs) or tensors received
// from an earlier stage (fed to run_sharded as local shards).
//
// Spec conversion of a transfer. The sender holds its shard in the transfer's
// spec (its schedule's spec of "<tensor>:send"); the receiver needs its shard
// in its own schedule's spec of the placeholder. Both groups have the same
// sub-mesh, so the SENDING group first reshards the tensor to the receiver's
// spec among its own members (the cost model's resharding plan, through
// runtime/reshard.hpp, counted like any plan step), and then member i sends
// its shard to member i of the receiving group, which holds exactly the slice
// it needs. Equal specs need no resharding: shard i goes straight to member i.
// A receiver's spec may not be a partial sum.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "costs/collective.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/staged_schedule.hpp"
#include "runtime/communicator.hpp"
#include "runtime/reference.hpp"
#include "runtime/run_check.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

struct StagedRunOptions {
  uint64_t seed = 0;       // parameters use this seed; micro-batch m's inputs use seed + m
  int micro_batches = 1;   // micro-batches streamed through the pipeline (>= 1)
  bool keep_outputs = true;  // keep each micro-batch's model outputs, gathered whole, on member 0 of the stage's group
};

struct StagedRunResult {
  int stage = 0;                                        // this rank's stage
  std::vector<std::map<std::string, Tensor>> outputs;   // per micro-batch: model outputs of this rank's stage, gathered whole, by node name (member 0 of the group with keep_outputs; empty otherwise)
  std::map<costs::CollectiveKind, int64_t> sent;        // bytes this rank sent in collectives inside its group (stage plans and transfer resharding), all micro-batches
  std::map<costs::CollectiveKind, int64_t> predicted;   // the cost model's ring bytes for the same steps
  int64_t p2p_sent = 0;                                 // bytes this rank sent to other stages, all micro-batches
  int64_t p2p_scheduled = 0;                            // the schedule's StageTransfer::bytes of this rank's sends, all micro-batches
};

// Checks without communicating that the staged schedule fits `graph`: every
// node in exactly one stage, each stage's Schedule valid for its stage graph
// on the sub-mesh, every received tensor brought by exactly one transfer from
// the stage that produces it, each transfer's spec equal to the sender's spec
// of "<tensor>:send", and the receiver's spec reachable from it. Throws
// ir::InputError naming the stage and tensor.
void validate_staged_schedule(const ir::Graph& graph, const ir::StagedSchedule& staged);

// A stage group's own mesh: `mesh` without axis 0 ({1} for a 1-D mesh).
ir::Mesh stage_group_mesh(const std::vector<int64_t>& mesh);
// Names of the model's own output nodes in a stage graph (not "<tensor>:send").
std::vector<std::string> stage_model_outputs(const ir::Graph& stage_graph);
// Byte figures as an fp32 tensor that travels exactly: each value as two
// elements (v / 2^20 and v % 2^20; exact below 2^44), and back.
Tensor encode_figures(const std::vector<int64_t>& figures);
std::vector<int64_t> decode_figures(const Tensor& t);

// The model inputs of micro-batch `micro_batch`, whole, by placeholder name:
// init_input with seed + micro_batch (micro-batch 0 is the unstaged run's input).
std::map<std::string, Tensor> micro_batch_inputs(const ir::Graph& graph, uint64_t seed, int micro_batch);

// Takes one micro-batch's model outputs (by node name, whole) as soon as
// they are computed: (micro-batch, outputs).
using OutputSink = std::function<void(int, std::map<std::string, Tensor>)>;

// Runs this rank's stage for every micro-batch, receiving and sending as
// pipeline.hpp orders it. `comm` is the whole mesh (staged.mesh); `params`
// overrides seeded parameters by full name. With a `sink`, member 0 of a
// stage with model outputs hands them to it after each micro-batch instead
// of keeping them in the result. Call validate_staged_schedule first; throws
// std::invalid_argument on a schedule it would have refused.
StagedRunResult run_staged(const ir::Graph& graph, const ir::StagedSchedule& staged, Communicator& comm,
                           const StagedRunOptions& options,
                           const std::map<std::string, KernelFn>& kernels = reference_kernels(),
                           const std::map<std::string, Tensor>& params = {}, const OutputSink& sink = nullptr);

struct StagedCommand {
  std::string model_name;                // printed in the header
  std::string backend = "cpu";           // backend name (runtime/backend.hpp)
  StagedRunOptions run;                  // seed and micro-batches
  bool check = false;                    // compare every micro-batch with the unsharded model on rank 0
  std::map<std::string, Tensor> params;  // parameters by full name (empty: seeded)
};

// `shard-run` on a staged schedule: validates (ir::InputError before any
// rank communicates), runs, and prints on rank 0 the per-stage table of byte
// counts and, with `check`, one line per micro-batch and output, each
// micro-batch's outputs streamed to rank 0 and compared with
// run_reference_outputs as they arrive. Returns the exit status on rank 0 (1 on a
// failed check or a byte mismatch) and 0 elsewhere.
int run_staged_command(const ir::Graph& graph, const ir::StagedSchedule& staged, const StagedCommand& command);

}  // namespace shardsynth::runtime
