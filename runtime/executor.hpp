#pragma once
// Executing a graph under a schedule on one rank of the mesh.
//
// Every rank initializes the full parameters and inputs from the seed
// (runtime/init.hpp), keeps only its shard as the schedule's specs say, and
// runs the ops in topological order on local shards with the reference
// kernels. At each op boundary it applies the schedule's syncs: a fwd_pre
// sync reshards an input before the op; a fwd_post sync whose source is
// partial resolves the op's own partial result; one whose source is the op's
// output spec reshards the tensor on its way to the graph output. An operand
// without a sync is read in its producer's spec. Reshardings run the cost
// model's plans (runtime/reshard.hpp), so the bytes the communicator counts
// can be set against the cost model's ring volume for the same steps.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "costs/collective.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"
#include "runtime/communicator.hpp"
#include "runtime/memory_ledger.hpp"
#include "runtime/reference.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

struct RunResult {
  Tensor output;                                       // the graph output, gathered whole on every rank
  std::map<std::string, Tensor> outputs;               // every output node by name: this rank's shard in the node's spec
  std::map<costs::CollectiveKind, int64_t> sent;       // bytes this rank sent per kind while executing the plan
  std::map<costs::CollectiveKind, int64_t> predicted;  // the cost model's ring bytes for the same steps
  std::optional<MemoryMeasured> memory;                // what this rank held, when the schedule lists its planned tensors
};

// Checks, without communicating, that the schedule fits the graph and mesh:
// every node and parameter has a spec that parses and divides its shape, and
// every sync names a node of the graph. Throws ir::InputError naming the
// node. Every rank gets the same answer, so a bad schedule stops every rank
// before anything is sent. Specs of tensors the graph lacks, and syncs whose
// FROM->TO text does not parse or names an operand the node lacks, are errors
// too, and so is a tensor whose element type the runtime cannot send in its
// priced size (float16, bfloat16: runtime/packing.hpp), and a planned tensor of the memory figures that the
// graph lacks. `where` (the schedule's file) starts every message.
void validate_schedule(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule,
                       const std::string& where = "schedule");

// When the memory figures of an inference schedule list its planned tensors,
// the run holds and frees them as planned and measures what it held
// (runtime/memory_ledger.hpp).
// Throws std::invalid_argument naming the node when the schedule lacks a
// spec, names an unknown node, or gives an op a layout its kernel cannot run.
// `kernels` runs each op on local shards (the backend's table, keyed by op
// kind; the CPU reference kernels by default); `params` and `inputs`
// override the seeded values of parameters (by full or tied-to name) and
// graph inputs (by placeholder name) with whole tensors; `local_inputs`
// gives placeholders by name as this rank's shard already in the
// placeholder's spec (a pipeline stage's received tensors), and wins over
// `inputs`.
RunResult run_sharded(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, Communicator& comm,
                      uint64_t seed, const std::map<std::string, KernelFn>& kernels = reference_kernels(),
                      const std::map<std::string, Tensor>& params = {}, const std::map<std::string, Tensor>& inputs = {},
                      const std::map<std::string, Tensor>& local_inputs = {});

}  // namespace shardsynth::runtime
