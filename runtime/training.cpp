#include "runtime/training.hpp"

#include <utility>

#include "ir/error.hpp"
#include "ir/op_table.hpp"
#include "runtime/executor.hpp"
#include "runtime/forward_pass.hpp"
#include "runtime/reshard.hpp"
#include "runtime/solo_communicator.hpp"
#include "runtime/training_state.hpp"

namespace shardsynth::runtime {
namespace {

// The training loop: per step, every micro-batch's forward and backward
// (gradients summed, each loss scaled by 1 / micro-batches), then one
// optimizer step. Micro-batch m reads inputs_of(m) and draws its mse target
// with seed + m.
TrainResult train_with(const ir::Graph& graph, const ir::Mesh& mesh, const PlanSpecs& plan, Communicator& comm,
                       const TrainSetup& setup, int micro_batches, const MicroBatchInputs& inputs_of,
                       const std::vector<ir::PlannedTensor>* planned = nullptr) {
  if (setup.options.steps < 1) {
    throw ir::InputError("--steps " + std::to_string(setup.options.steps) + ": must be at least 1");
  }
  TrainResult result;
  result.loss = choose_loss(graph);
  TrainingState state(graph, mesh, plan, comm, setup);
  if (planned) state.track_memory(*planned);
  for (int step = 1; step <= setup.options.steps; ++step) {
    state.begin_step();
    double loss = 0;
    for (int m = 0; m < micro_batches; ++m) {
      const std::map<std::string, Tensor> inputs = inputs_of ? inputs_of(m) : setup.inputs;
      const auto pass = state.forward(&inputs, nullptr);
      std::map<std::string, Tensor> grads;
      for (ir::Vertex v : graph.topological_order()) {
        const ir::Node& node = graph.node(v);
        if (node.kind != ir::kOutput) continue;
        const Tensor* labels = result.loss.kind == LossKind::next_token ? &pass->whole_input(result.loss.labels) : nullptr;
        loss += state.take_loss(*pass, node.name, result.loss, labels, setup.seed + static_cast<uint64_t>(m),
                                1.0 / micro_batches, grads);
      }
      state.backward(*pass, std::move(grads));
    }
    result.losses.push_back(loss / micro_batches);
    if (step == 1) result.first_grads = state.whole_grads();
    state.end_step();
  }
  result.params = state.whole_params();
  result.sent = state.sent();
  result.predicted = state.predicted();
  result.recomputed = state.recomputed();
  if (const LossScaler* scaler = state.scaler()) {
    result.skipped = scaler->skipped();
    result.loss_scale = scaler->scale();
  }
  result.memory = state.memory();
  return result;
}

}  // namespace

TrainResult train_sharded(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, Communicator& comm,
                          const TrainSetup& setup) {
  if (schedule.mode != "training") {
    throw ir::InputError("the schedule is a plan for " + schedule.mode +
                         "; training needs one synthesized with --mode training (its gradient syncs are priced there)");
  }
  validate_schedule(graph, mesh, schedule);
  const PlanSpecs plan = parse_plan(graph, mesh, schedule);
  const bool tracked = schedule.memory && !schedule.memory->tensors.empty();
  return train_with(graph, mesh, plan, comm, setup, 1, nullptr, tracked ? &schedule.memory->tensors : nullptr);
}

TrainResult train_reference(const ir::Graph& graph, const TrainSetup& setup, int micro_batches,
                            const MicroBatchInputs& inputs_of) {
  const ir::Mesh mesh = ir::parse_mesh("1");
  const PlanSpecs plan = replicated_plan(graph);
  SoloCommunicator comm;
  TrainSetup reference = setup;
  reference.kernels = &reference_kernels();
  reference.backward = &reference_backward_kernels();
  return train_with(graph, mesh, plan, comm, reference, micro_batches, inputs_of);
}

}  // namespace shardsynth::runtime
