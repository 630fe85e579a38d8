#include "runtime/training_state.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

#include "ir/error.hpp"
#include "ir/op_table.hpp"
#include "ir/schedule.hpp"
#include "ir/recompute_segments.hpp"
#include "runtime/backward.hpp"
#include "runtime/half.hpp"
#include "runtime/init.hpp"
#include "runtime/reshard.hpp"

namespace shardsynth::runtime {
namespace {

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

}  // namespace

void accumulate(Tensor& into, const Tensor& more) {
  if (into.data.empty() && into.bits.empty() && into.shape.empty()) {
    into = more;
    return;
  }
  if (into.shape != more.shape) throw std::invalid_argument("gradient accumulation: shapes differ");
  if (into.holds_bits()) {
    // Each sum in fp32, rounded once into the 16-bit storage.
    for (std::size_t i = 0; i < into.bits.size(); ++i) {
      into.bits[i] = half_bits(half_value(into.bits[i], into.dtype) + element(more, i), into.dtype);
    }
    return;
  }
  if (more.holds_bits()) {
    for (std::size_t i = 0; i < into.data.size(); ++i) into.data[i] += element(more, i);
    return;
  }
  for (std::size_t i = 0; i < into.data.size(); ++i) into.data[i] += more.data[i];
}

TrainingState::TrainingState(const ir::Graph& graph, const ir::Mesh& mesh, const PlanSpecs& plan, Communicator& comm,
                             const TrainSetup& setup)
    : graph_(graph), mesh_(mesh), plan_(plan), comm_(comm), setup_(setup), resharder_(mesh, comm),
      optimizer_(setup.options.optimizer, setup.options.lr) {
  const auto coords = comm.coords();
  auto store = [&](const std::string& full, const ir::Param& p, const std::string& use) {
    const auto given = setup.params.find(full);
    const Tensor whole = given != setup.params.end() ? given->second : init_param(full, p.type.shape, setup.seed);
    if (whole.shape != p.type.shape) {
      throw ir::InputError("parameter '" + full + "' has shape " + ir::shape_string(whole.shape) + ", the graph needs " +
                           ir::shape_string(p.type.shape));
    }
    // An entry the schedule leaves out is the one before it (ir::kStoredSuffix).
    auto spec_or = [&](const std::string& tensor, const ir::Spec& fallback) {
      const auto it = plan.specs.find(tensor);
      return it == plan.specs.end() ? fallback : it->second;
    };
    const ir::Spec stored = spec_or(use + ir::kStoredSuffix, plan.of(use));
    const ir::Spec grad = spec_or(use + ir::kGradSuffix, stored);
    const ir::Spec state = spec_or(use + ir::kStateSuffix, grad);
    Stored& s = stored_[full] = {p.type, stored, grad, state, use, rounded(local_shard(whole, stored, mesh, coords), p.type.dtype), {}};
    s.grad_dtype = costs::reduce_dtype(setup.precision, p.type.dtype);
    if (is_half(p.type.dtype)) s.master = rounded(local_shard(whole, state, mesh, coords), ir::DType::float32);
  };
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    for (const ir::Param& p : node.params) {
      if (p.tied_to.empty()) store(node.name + "." + p.name, p, node.name + "." + p.name);
    }
  }
  // A tie to a parameter the graph does not store (a stage of a pipeline)
  // keeps its own copy, seeded or given under the tied-to name.
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    for (const ir::Param& p : node.params) {
      if (!p.tied_to.empty() && !stored_.count(p.tied_to)) store(p.tied_to, p, node.name + "." + p.name);
    }
  }
  // Checkpointed ops are recomputed, in forward order, before the backward of their segment's last node.
  if (!plan.recompute.empty()) {
    const auto order = graph.topological_order();
    const ir::RecomputeSegments segments = ir::recompute_segments(graph, order);
    for (ir::Vertex v : order) {
      if (plan.recompute.count(graph.node(v).name)) {
        recompute_at_[segments.segment_end[segments.segment[v]]].push_back(v);
      }
    }
  }
  for (const auto& [name, s] : stored_) {
    if (s.type.dtype == ir::DType::float16 && setup.precision.loss_scaling) scaler_.emplace(setup.scaler);
  }
  // The optimizer's state is held from the start, as the memory model counts it.
  for (const auto& [name, s] : stored_) optimizer_.prepare(name, ir::local_shape(s.type.shape, s.state_spec, mesh));
}

void TrainingState::track_memory(std::vector<ir::PlannedTensor> planned) { planned_ = std::move(planned); }

std::string TrainingState::stored_name(const ir::Node& node, const ir::Param& p) const {
  return p.tied_to.empty() || !stored_.count(p.tied_to) ? node.name + "." + p.name : p.tied_to;
}

TrainingState::Stored& TrainingState::stored_for(const ir::Node& node, const ir::Param& p) {
  return stored_.at(stored_name(node, p));
}

void TrainingState::begin_step() {
  for (auto& [name, s] : stored_) s.grad = rounded(zeros(ir::local_shape(s.type.shape, s.grad_spec, mesh_)), s.grad_dtype);
  if (planned_) {
    // A new step: the parameters, their gradient buffers and their state are held the whole step.
    ledger_ = std::make_unique<MemoryLedger>(*planned_, step_names(graph_, true), [this](const ir::PlannedTensor& t) {
      return planned_local_bytes(graph_, mesh_, plan_, t);
    });
    ledger_->begin(0);
    for (const auto& [name, s] : stored_) {
      ledger_->hold(name, held_bytes(s.value));
      ledger_->hold(name + ir::kGradSuffix, held_bytes(s.grad));
      const int64_t master = held_bytes(s.master);
      ledger_->hold(name + ir::kStateSuffix, optimizer_.state_bytes(name) + master);
    }
  }
}

const Tensor& TrainingState::take(const ir::Node& node, const ir::Param& p) {
  const std::string use = node.name + "." + p.name;
  const Stored& s = stored_for(node, p);
  if (ledger_) ledger_->read(stored_name(node, p));
  const ir::Spec& spec = plan_.of(use);
  if (s.spec == spec && s.use == use) return s.value;  // read in place: no copy
  // Stored apart from the use (ZeRO-3/FSDP's gather) or a tied use (always,
  // as synth plans it: it reads another op's parameter): a copy for this op alone.
  Gathered& copy = gathered_[use] = {resharder_.move(s.value, s.type, s.spec, spec), 0};
  if (ledger_) {
    const int64_t bytes = held_bytes(copy.value);
    // A recomputation's copy is not planned (synth prices its gather but
    // does not hold it): unplanned transient bytes, as resharding scratch is.
    if (const std::string planned = use + ir::kGatheredSuffix; ledger_->planned(planned) && !recomputing_) {
      ledger_->hold(planned, bytes);  // throws outside its planned spans
    } else {
      copy.unplanned = bytes;
      unplanned_gathered_ += bytes;
      ledger_->transient("gathered parameters", unplanned_gathered_);
    }
  }
  return copy.value;
}

void TrainingState::give_back(const ir::Node& node) {
  for (const ir::Param& p : node.params) {
    const auto it = gathered_.find(node.name + "." + p.name);
    if (it == gathered_.end()) continue;
    unplanned_gathered_ -= it->second.unplanned;
    gathered_.erase(it);
  }
  if (ledger_) ledger_->transient("gathered parameters", unplanned_gathered_);
}

std::unique_ptr<ForwardPass> TrainingState::forward(const std::map<std::string, Tensor>* inputs,
                                                    const std::map<std::string, Tensor>* local_inputs) {
  auto pass = std::make_unique<ForwardPass>(graph_, plan_, resharder_, *setup_.kernels,
                                            ForwardSources{setup_.seed, &setup_.params, inputs, local_inputs, this},
                                            true);
  pass->set_ledger(ledger_.get());
  pass->run();
  return pass;
}

std::map<std::string, Tensor> TrainingState::backward(ForwardPass& pass, std::map<std::string, Tensor> output_grads,
                                                      const std::set<std::string>& wanted) {
  std::map<std::string, Tensor> grads = std::move(output_grads);  // node -> gradient of its output, spec without partial
  std::map<std::string, Tensor> out;
  const auto order = graph_.topological_order();
  const auto n = static_cast<int64_t>(order.size());
  // Activation gradients held now: transient (the model counts none).
  auto report = [&] {
    if (!ledger_) return;
    int64_t bytes = 0;
    for (const auto& [name, grad] : grads) {
      bytes += held_bytes(grad);
    }
    ledger_->transient("activation gradients", bytes);
  };
  for (auto position = n - 1; position >= 0; --position) {
    const ir::Vertex v = order[position];
    if (ledger_) ledger_->begin(2 * n - 1 - position);  // its backward's time step
    report();
    if (const auto again = recompute_at_.find(position); again != recompute_at_.end()) {
      recomputing_ = true;
      for (ir::Vertex u : again->second) pass.recompute(u);
      recomputing_ = false;
      recomputed_ += static_cast<int64_t>(again->second.size());
    }
    const ir::Node& node = graph_.node(v);
    auto g = grads.find(node.name);
    if (g == grads.end()) continue;
    if (node.kind == ir::kPlaceholder) {
      out[node.name] = std::move(g->second);
    } else {
      if (ledger_) ledger_->read(node.name);
      backward_op(v, *pass.saved(node.name), std::move(g->second), grads, wanted);
    }
    grads.erase(node.name);
    report();
  }
  return out;
}

void TrainingState::end_step() {
  if (ledger_) {
    ledger_->begin(2 * static_cast<int64_t>(graph_.size()));
    ledger_->transient("activation gradients", 0);
  }
  // float16: a non-finite gradient element on any rank skips the step. The
  // local gradient buffers cover the state shards (grad to state is a slice).
  bool skip = false;
  if (scaler_) {
    bool found = false;
    for (const auto& [name, s] : stored_) {
      found = found || !all_finite(s.grad);
    }
    skip = comm_.any_rank(found);
  }
  if (!skip) optimizer_.begin_step();
  const float inverse = scaler_ ? scaler_->inverse() : 1.0f;
  for (auto& [name, s] : stored_) update(name, s, inverse, skip);
  if (scaler_) scaler_->update(skip);
  if (ledger_) {
    ledger_->finish();
    memory_ = memory_ ? larger(*memory_, ledger_->measured()) : ledger_->measured();
    ledger_.reset();
  }
}

void TrainingState::update(const std::string& name, Stored& s, float inverse_scale, bool skip) {
  if (ledger_) {
    for (const char* part : {"", ir::kGradSuffix, ir::kStateSuffix}) ledger_->read(name + part);
  }
  if (!s.master.shape.empty() || !s.master.data.empty()) {
    // Mixed precision: the fp32 master shard (in the state spec) takes the
    // step; the parameter is it rounded, moved to the stored spec.
    Tensor grad = rounded(resharder_.move(s.grad, grad_type(s), s.grad_spec, s.state_spec), ir::DType::float32);
    if (inverse_scale != 1.0f) {
      for (float& g : grad.data) g *= inverse_scale;
    }
    if (!skip) optimizer_.update(name, s.master, grad);
    const Tensor value = rounded(s.master, s.type.dtype);  // the cast back, into 16-bit storage
    if (ledger_) {
      ledger_->transient("scratch", held_bytes(grad) + held_bytes(value));
      ledger_->transient("scratch", 0);
    }
    s.value = resharder_.move(value, s.type, s.state_spec, s.spec);
    return;
  }
  if (s.state_spec == s.spec && s.grad_spec == s.spec) {
    optimizer_.update(name, s.value, s.grad);
    return;
  }
  // ZeRO: update this rank's state shard (slices of the parameter and the
  // gradient), then gather the updated shard back to the stored spec.
  Tensor value = resharder_.move(s.value, s.type, s.spec, s.state_spec);
  const Tensor grad = resharder_.move(s.grad, s.type, s.grad_spec, s.state_spec);
  optimizer_.update(name, value, grad);
  if (ledger_) {
    const int64_t moved = held_bytes(value) + held_bytes(grad);
    ledger_->transient("scratch", moved);
    ledger_->transient("scratch", 0);
  }
  s.value = resharder_.move(value, s.type, s.state_spec, s.spec);
}

double TrainingState::take_loss(const ForwardPass& pass, const std::string& output, const LossChoice& choice,
                                const Tensor* labels, uint64_t seed, double scale, std::map<std::string, Tensor>& grads) {
  const ir::Node& node = graph_.node(*graph_.find(output));
  const ir::Spec& spec = plan_.of(output);
  // An in-graph loss (the plan's loss head) is whole on every rank where
  // the plan leaves it: read in place, no gather outside the plan. The loss
  // is taken in fp32 on the output's values (autocast's rule for a 16-bit output).
  const bool in_place = choice.kind == LossKind::in_graph && spec == ir::replicated(spec.rank());
  LossValue loss = compute_loss(
      choice, widened(in_place ? pass.value(output) : gather(pass.value(output), node.type, spec)), labels, seed);
  if (scaler_) scale *= scaler_->scale();
  if (scale != 1.0) {
    for (float& g : loss.grad.data) g = static_cast<float>(g * scale);
  }
  // Every partial summand of the output has the output's gradient.
  grads[output] = rounded(local_shard(loss.grad, ir::without_partial(spec), mesh_, comm_.coords()), node.type.dtype);
  return loss.value;
}

Tensor TrainingState::gather(const Tensor& local, const ir::TensorType& type, const ir::Spec& spec) {
  const auto before = comm_.bytes_sent();
  Tensor whole = reshard(local, spec, ir::replicated(spec.rank()), mesh_, comm_, type.dtype);
  for (const auto& [kind, bytes] : comm_.bytes_sent()) {
    const auto was = before.find(kind);
    excluded_[kind] += bytes - (was == before.end() ? 0 : was->second);
  }
  return whole;
}

std::vector<std::string> TrainingState::stored_names() const {
  std::vector<std::string> out;
  for (const auto& [name, s] : stored_) out.push_back(name);
  return out;
}

Tensor TrainingState::whole_grad(const std::string& name) {
  Stored& s = stored_.at(name);
  return widened(gather(s.grad, grad_type(s), s.spec));
}

void TrainingState::add_to_grad(const std::string& name, const Tensor& whole) {
  Stored& s = stored_.at(name);
  accumulate(s.grad, local_shard(whole, s.spec, mesh_, comm_.coords()));
}

std::map<std::string, Tensor> TrainingState::whole_grads() {
  std::map<std::string, Tensor> out;
  for (auto& [name, s] : stored_) out[name] = widened(gather(s.grad, grad_type(s), s.grad_spec));
  return out;
}

std::map<std::string, Tensor> TrainingState::whole_params() {
  std::map<std::string, Tensor> out;
  for (auto& [name, s] : stored_) {
    out[name] = s.master.data.empty() ? widened(gather(s.value, s.type, s.spec))
                                      : gather(s.master, {s.type.shape, ir::DType::float32}, s.state_spec);
  }
  return out;
}

std::map<costs::CollectiveKind, int64_t> TrainingState::sent() const {
  std::map<costs::CollectiveKind, int64_t> out;
  for (const auto& [kind, bytes] : comm_.bytes_sent()) {
    const auto excluded = excluded_.find(kind);
    out[kind] = bytes - (excluded == excluded_.end() ? 0 : excluded->second);
  }
  return out;
}

void TrainingState::backward_op(ir::Vertex v, const SavedOp& saved, Tensor grad_output, std::map<std::string, Tensor>& grads,
                                const std::set<std::string>& wanted) {
  const ir::Node& node = graph_.node(v);
  const Tensor grad_result =
      resharder_.move(grad_output, node.type, ir::without_partial(plan_.of(node.name)), ir::without_partial(saved.result));
  Gradients g;
  if (node.kind == ir::kOutput) {
    g.inputs.emplace_back(grad_result);
  } else {
    const auto kernel = setup_.backward->find(node.kind);
    if (kernel == setup_.backward->end()) {
      throw std::invalid_argument("no backward kernel for node '" + node.name + "' (" + node.kind + ")");
    }
    // The parameters again (a gathered copy made now, freed after the kernel).
    std::vector<const Tensor*> uses;
    for (const ir::Param& p : node.params) uses.push_back(&take(node, p));
    std::vector<Tensor> zeroed;
    KernelCall call = saved_call(node, saved, kernel_params(graph_, v, uses, saved.leader, zeroed));
    call.exchange = row_exchange_hook(graph_, v, saved, resharder_);
    g = kernel->second({call, saved.output, grad_result});
    give_back(node);
  }
  // Each gradient a kernel makes is a value of its tensor's dtype.
  const auto producers = graph_.inputs_of(v);
  for (std::size_t i = 0; i < producers.size() && i < g.inputs.size(); ++i) {
    if (g.inputs[i]) round_in_place(*g.inputs[i], graph_.node(producers[i]).type.dtype);
  }
  for (const ir::Param& param : node.params) {
    if (auto it = g.params.find(param.name); it != g.params.end()) round_in_place(it->second, param.type.dtype);
  }
  // The mesh axes sharding the op's iteration space.
  std::set<int> used(saved.result.partial.begin(), saved.result.partial.end());
  add_dim_axes(saved.result, used);
  for (const auto& spec : saved.input_specs) add_dim_axes(spec, used);
  for (const ir::Param& p : node.params) add_dim_axes(plan_.of(node.name + "." + p.name), used);

  if (ledger_) {
    for (ir::Vertex u : producers) ledger_->read(graph_.node(u).name);  // the saved operands it read
  }
  for (std::size_t i = 0; i < producers.size() && i < g.inputs.size(); ++i) {
    const ir::Node& producer = graph_.node(producers[i]);
    const bool flows = producer.kind != ir::kPlaceholder || wanted.count(producer.name);
    if (!flows || producer.type.dtype == ir::DType::int64 || !g.inputs[i]) continue;
    const ir::Spec& read = saved.input_specs[i];
    const ir::Spec from = with_partial(ir::without_partial(read), grad_partial(used, read));
    accumulate(grads[producer.name],
               resharder_.move(*g.inputs[i], producer.type, from, ir::without_partial(plan_.of(producer.name))));
  }
  if (node.params.empty()) return;
  const auto contracted = contracted_params(graph_, v);
  for (std::size_t p = 0; p < node.params.size(); ++p) {
    const ir::Param& param = node.params[p];
    const std::string use = node.name + "." + param.name;
    auto it = g.params.find(param.name);
    if (it == g.params.end()) throw std::invalid_argument("backward of '" + node.name + "' gave no gradient for " + param.name);
    Tensor local = std::move(it->second);
    if (!saved.leader && !contracted[p]) local = zeros(local.shape, local.dtype);
    const ir::Spec& spec = plan_.of(use);
    const ir::Spec partial = with_partial(spec, grad_partial(used, spec));
    Stored& s = stored_for(node, param);
    // Reduced in the policy's dtype (as wide as the parameter's or wider: the values stay).
    const ir::TensorType reduced = grad_type(s);
    round_in_place(local, reduced.dtype);
    if (s.use == use) {
      // The gradient is reduced straight into its buffer (a reduce-scatter for ZeRO-2/3).
      accumulate(s.grad, resharder_.move(local, reduced, partial, s.grad_spec));
      continue;
    }
    // A tied use: resolved in its own spec, then sent to the stored spec and into the buffer.
    const Tensor resolved = resharder_.move(local, reduced, partial, spec);
    const Tensor at_stored = resharder_.move(resolved, reduced, spec, s.spec);
    accumulate(s.grad, s.grad_spec == s.spec ? at_stored : resharder_.move(at_stored, reduced, s.spec, s.grad_spec));
  }
}

}  // namespace shardsynth::runtime
