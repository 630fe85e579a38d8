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

// The intra-op training loop: one batch per step, the loss on the output.
TrainResult train_with(const ir::Graph& graph, const ir::Mesh& mesh, const PlanSpecs& plan, Communicator& comm,
                       const TrainSetup& setup) {
  if (setup.options.steps < 1) {
    throw ir::InputError("--steps " + std::to_string(setup.options.steps) + ": must be at least 1");
  }
  TrainResult result;
  result.loss = choose_loss(graph);
  TrainingState state(graph, mesh, plan, comm, setup);
  for (int step = 1; step <= setup.options.steps; ++step) {
    state.begin_step();
    const auto pass = state.forward(&setup.inputs, nullptr);
    std::map<std::string, Tensor> grads;
    for (ir::Vertex v : graph.topological_order()) {
      const ir::Node& node = graph.node(v);
      if (node.kind != ir::kOutput) continue;
      const ir::Spec& spec = plan.of(node.name);
      const Tensor whole = state.gather(pass->value(node.name), node.type, spec);
      const Tensor* labels = result.loss.kind == LossKind::next_token ? &pass->whole_input(result.loss.labels) : nullptr;
      LossValue loss = compute_loss(result.loss, whole, labels, setup.seed);
      result.losses.push_back(loss.value);
      ir::Spec whole_dims = spec;  // the gradient of the output's partial summands is the same for each
      whole_dims.partial.clear();
      grads[node.name] = local_shard(loss.grad, whole_dims, mesh, comm.coords());
    }
    state.backward(*pass, std::move(grads));
    if (step == 1) result.first_grads = state.whole_grads();
    state.end_step();
  }
  result.params = state.whole_params();
  result.sent = state.sent();
  result.predicted = state.predicted();
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
  return train_with(graph, mesh, plan, comm, setup);
}

TrainResult train_reference(const ir::Graph& graph, const TrainSetup& setup) {
  const ir::Mesh mesh = ir::parse_mesh("1");
  const PlanSpecs plan = replicated_plan(graph);
  SoloCommunicator comm;
  TrainSetup reference = setup;
  reference.kernels = &reference_kernels();
  reference.backward = &reference_backward_kernels();
  return train_with(graph, mesh, plan, comm, reference);
}

}  // namespace shardsynth::runtime
