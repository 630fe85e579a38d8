#include "runtime/training.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

#include "ir/error.hpp"
#include "ir/op_table.hpp"
#include "runtime/executor.hpp"
#include "runtime/forward_pass.hpp"
#include "runtime/init.hpp"
#include "runtime/reshard.hpp"
#include "runtime/solo_communicator.hpp"

namespace shardsynth::runtime {
namespace {

ir::Spec without_partial(ir::Spec spec) {
  spec.partial.clear();
  return spec;
}

ir::Spec with_partial(ir::Spec spec, const std::set<int>& axes) {
  for (int axis : axes) {
    if (std::find(spec.partial.begin(), spec.partial.end(), axis) == spec.partial.end()) spec.partial.push_back(axis);
  }
  std::sort(spec.partial.begin(), spec.partial.end());
  return spec;
}

void add_dim_axes(const ir::Spec& spec, std::set<int>& axes) {
  for (const auto& dim : spec.dims) axes.insert(dim.begin(), dim.end());
}

// Mesh axes a gradient of a tensor read in `read` comes out partial on: the
// axes sharding the op (`used`) that shard none of its dims and are not
// already partial in it.
std::set<int> grad_partial(const std::set<int>& used, const ir::Spec& read) {
  std::set<int> own(read.partial.begin(), read.partial.end());
  add_dim_axes(read, own);
  std::set<int> out;
  for (int axis : used) {
    if (!own.count(axis)) out.insert(axis);
  }
  return out;
}

void accumulate(Tensor& into, const Tensor& more) {
  if (into.data.empty() && into.shape.empty()) {
    into = more;
    return;
  }
  if (into.shape != more.shape) throw std::invalid_argument("gradient accumulation: shapes differ");
  for (std::size_t i = 0; i < into.data.size(); ++i) into.data[i] += more.data[i];
}

// A parameter as training holds it: one per stored (not tied) parameter.
struct Stored {
  ir::TensorType type;  // global type
  ir::Spec spec;        // the spec it is stored (and used) in
  std::string use;      // "node.param" of the use that stores it
  Tensor value;         // this rank's shard
  Tensor grad;          // this rank's shard of the step's gradient, resolved to `spec`
};

class Trainer {
 public:
  Trainer(const ir::Graph& graph, const ir::Mesh& mesh, const PlanSpecs& plan, Communicator& comm, const TrainSetup& setup)
      : graph_(graph), mesh_(mesh), plan_(plan), comm_(comm), setup_(setup), resharder_(mesh, comm),
        optimizer_(setup.options.optimizer, setup.options.lr) {
    if (setup.options.steps < 1) {
      throw ir::InputError("--steps " + std::to_string(setup.options.steps) + ": must be at least 1");
    }
    result_.loss = choose_loss(graph);
    const auto coords = comm.coords();
    for (ir::Vertex v : graph.topological_order()) {
      const ir::Node& node = graph.node(v);
      for (const ir::Param& p : node.params) {
        if (!p.tied_to.empty()) continue;
        const std::string full = node.name + "." + p.name;
        const auto given = setup.params.find(full);
        const Tensor whole = given != setup.params.end() ? given->second : init_param(full, p.type.shape, setup.seed);
        if (whole.shape != p.type.shape) {
          throw ir::InputError("parameter '" + full + "' has shape " + ir::shape_string(whole.shape) +
                               ", the graph needs " + ir::shape_string(p.type.shape));
        }
        stored_[full] = {p.type, plan.of(full), full, local_shard(whole, plan.of(full), mesh, coords), {}};
      }
    }
    // A tie to a parameter the graph does not store (a stage of a pipeline)
    // keeps its own copy, seeded or given under the tied-to name.
    for (ir::Vertex v : graph.topological_order()) {
      const ir::Node& node = graph.node(v);
      for (const ir::Param& p : node.params) {
        if (p.tied_to.empty() || stored_.count(p.tied_to)) continue;
        const std::string use = node.name + "." + p.name;
        const auto given = setup.params.find(p.tied_to);
        const Tensor whole = given != setup.params.end() ? given->second : init_param(p.tied_to, p.type.shape, setup.seed);
        stored_[p.tied_to] = {p.type, plan.of(use), use, local_shard(whole, plan.of(use), mesh, coords), {}};
      }
    }
  }

  TrainResult run() {
    for (int step = 1; step <= setup_.options.steps; ++step) {
      train_step();
      if (step == 1) {
        for (auto& [name, s] : stored_) result_.first_grads[name] = gather(s.grad, s.type, s.spec);
      }
      optimizer_.begin_step();
      for (auto& [name, s] : stored_) optimizer_.update(name, s.value, s.grad);
    }
    for (auto& [name, s] : stored_) result_.params[name] = gather(s.value, s.type, s.spec);
    for (const auto& [kind, bytes] : comm_.bytes_sent()) {
      const auto excluded = excluded_.find(kind);
      result_.sent[kind] = bytes - (excluded == excluded_.end() ? 0 : excluded->second);
    }
    result_.predicted = resharder_.predicted();
    return std::move(result_);
  }

 private:
  // `local` under `spec` gathered whole, outside the plan's byte count.
  Tensor gather(const Tensor& local, const ir::TensorType& type, const ir::Spec& spec) {
    const auto before = comm_.bytes_sent();
    Tensor whole = reshard(local, spec, ir::replicated(spec.rank()), mesh_, comm_, type.dtype);
    for (const auto& [kind, bytes] : comm_.bytes_sent()) {
      const auto was = before.find(kind);
      excluded_[kind] += bytes - (was == before.end() ? 0 : was->second);
    }
    return whole;
  }

  // The stored parameter behind use `node.param`.
  Stored& stored_for(const ir::Node& node, const ir::Param& p) {
    return stored_.at(p.tied_to.empty() || !stored_.count(p.tied_to) ? node.name + "." + p.name : p.tied_to);
  }

  void train_step() {
    // Every use's local parameter: the stored shard, resharded for a tied use.
    std::map<std::string, Tensor> local_params;
    for (ir::Vertex v : graph_.topological_order()) {
      const ir::Node& node = graph_.node(v);
      for (const ir::Param& p : node.params) {
        const std::string use = node.name + "." + p.name;
        Stored& s = stored_for(node, p);
        s.grad = zeros(s.value.shape);
        local_params[use] = s.use == use ? s.value : resharder_.move(s.value, s.type, s.spec, plan_.of(use));
      }
    }
    ForwardPass pass(graph_, plan_, resharder_, *setup_.kernels,
                     {setup_.seed, &setup_.params, &setup_.inputs, nullptr, &local_params}, true);
    pass.run();
    std::map<std::string, Tensor> grads;  // node -> gradient of its output, in its output spec without partial axes
    for (ir::Vertex v : graph_.topological_order()) {
      const ir::Node& node = graph_.node(v);
      if (node.kind != ir::kOutput) continue;
      const ir::Spec& spec = plan_.of(node.name);
      const Tensor whole = gather(pass.value(node.name), node.type, spec);
      const Tensor* labels = result_.loss.kind == LossKind::next_token ? &pass.whole_input(result_.loss.labels) : nullptr;
      LossValue loss = compute_loss(result_.loss, whole, labels, setup_.seed);
      result_.losses.push_back(loss.value);
      grads[node.name] = local_shard(loss.grad, without_partial(spec), mesh_, comm_.coords());
    }
    auto order = graph_.topological_order();
    std::reverse(order.begin(), order.end());
    for (ir::Vertex v : order) {
      const ir::Node& node = graph_.node(v);
      auto g = grads.find(node.name);
      if (g == grads.end() || node.kind == ir::kPlaceholder) continue;
      backward_op(v, *pass.saved(node.name), std::move(g->second), grads);
      grads.erase(node.name);
    }
  }

  void backward_op(ir::Vertex v, const SavedOp& saved, Tensor grad_output, std::map<std::string, Tensor>& grads) {
    const ir::Node& node = graph_.node(v);
    const Tensor grad_result =
        resharder_.move(grad_output, node.type, without_partial(plan_.of(node.name)), without_partial(saved.result));
    Gradients g;
    if (node.kind == ir::kOutput) {
      g.inputs.emplace_back(grad_result);
    } else {
      const auto kernel = setup_.backward->find(node.kind);
      if (kernel == setup_.backward->end()) {
        throw std::invalid_argument("no backward kernel for node '" + node.name + "' (" + node.kind + ")");
      }
      const KernelCall call = saved_call(node, saved);
      g = kernel->second({call, saved.output, grad_result});
    }
    // The mesh axes sharding the op's iteration space.
    std::set<int> used(saved.result.partial.begin(), saved.result.partial.end());
    add_dim_axes(saved.result, used);
    for (const auto& spec : saved.input_specs) add_dim_axes(spec, used);
    for (const ir::Param& p : node.params) add_dim_axes(plan_.of(node.name + "." + p.name), used);

    const auto producers = graph_.inputs_of(v);
    for (std::size_t i = 0; i < producers.size() && i < g.inputs.size(); ++i) {
      const ir::Node& producer = graph_.node(producers[i]);
      if (producer.kind == ir::kPlaceholder || producer.type.dtype == ir::DType::int64 || !g.inputs[i]) continue;
      const ir::Spec& read = saved.input_specs[i];
      const ir::Spec from = with_partial(without_partial(read), grad_partial(used, read));
      accumulate(grads[producer.name],
                 resharder_.move(*g.inputs[i], producer.type, from, without_partial(plan_.of(producer.name))));
    }
    if (node.params.empty()) return;
    const auto contracted = contracted_params(graph_, v);
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      const ir::Param& param = node.params[p];
      const std::string use = node.name + "." + param.name;
      auto it = g.params.find(param.name);
      if (it == g.params.end()) throw std::invalid_argument("backward of '" + node.name + "' gave no gradient for " + param.name);
      Tensor local = std::move(it->second);
      if (!saved.leader && !contracted[p]) std::fill(local.data.begin(), local.data.end(), 0.0f);
      const ir::Spec& spec = plan_.of(use);
      Tensor resolved = resharder_.move(local, param.type, with_partial(spec, grad_partial(used, spec)), spec);
      Stored& s = stored_for(node, param);
      accumulate(s.grad, s.use == use ? resolved : resharder_.move(resolved, param.type, spec, s.spec));
    }
  }

  const ir::Graph& graph_;
  const ir::Mesh& mesh_;
  const PlanSpecs& plan_;
  Communicator& comm_;
  const TrainSetup& setup_;
  PricedResharder resharder_;
  Optimizer optimizer_;
  std::map<std::string, Stored> stored_;                   // full parameter name -> its shard, gradient
  std::map<costs::CollectiveKind, int64_t> excluded_;      // bytes sent outside the plan (gathers for the loss and results)
  TrainResult result_;
};

}  // namespace

TrainResult train_sharded(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, Communicator& comm,
                          const TrainSetup& setup) {
  if (schedule.mode != "training") {
    throw ir::InputError("the schedule is a plan for " + schedule.mode +
                         "; training needs one synthesized with --mode training (its gradient syncs are priced there)");
  }
  validate_schedule(graph, mesh, schedule);
  const PlanSpecs plan = parse_plan(graph, mesh, schedule);
  return Trainer(graph, mesh, plan, comm, setup).run();
}

TrainResult train_reference(const ir::Graph& graph, const TrainSetup& setup) {
  const ir::Mesh mesh = ir::parse_mesh("1");
  const PlanSpecs plan = replicated_plan(graph);
  SoloCommunicator comm;
  TrainSetup reference = setup;
  reference.kernels = &reference_kernels();
  reference.backward = &reference_backward_kernels();
  return Trainer(graph, mesh, plan, comm, reference).run();
}

}  // namespace shardsynth::runtime
