#include "runtime/forward_pass.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "costs/alpha_beta_cost_model.hpp"
#include "costs/row_exchange.hpp"
#include "ir/op_table.hpp"
#include "ir/recompute_segments.hpp"
#include "runtime/half.hpp"
#include "runtime/init.hpp"
#include "runtime/reshard.hpp"

namespace shardsynth::runtime {

Tensor PricedResharder::move(const Tensor& local, const ir::TensorType& type, const ir::Spec& from, const ir::Spec& to) {
  if (from == to) return local;
  const auto plan = costs::plan_resharding(from, to, mesh_);
  if (!plan) {
    throw std::invalid_argument("schedule: cannot reshard " + ir::to_string(from, mesh_.rank()) + " to " +
                                ir::to_string(to, mesh_.rank()));
  }
  ir::Spec current = from;
  for (const auto& s : *plan) {
    if (s.kind != costs::CollectiveKind::slice && mesh_.shape[s.mesh_axis] > 1) {
      predicted_[s.kind] += costs::ring_bytes_sent(s, type, current, mesh_);
    }
    current = costs::apply(s, current);
  }
  return reshard(local, from, to, mesh_, comm_, type.dtype);
}

const ir::Spec& PlanSpecs::of(const std::string& name) const {
  auto it = specs.find(name);
  if (it == specs.end()) throw std::invalid_argument("schedule: no spec for tensor '" + name + "'");
  return it->second;
}

ir::Spec PlanSpecs::result_of(const std::string& name) const {
  const ir::Spec& output = of(name);
  ir::Spec result = output;
  if (auto it = post.find(name); it != post.end()) {
    for (const auto& [from, to] : it->second) {
      if (to == output && !from.partial.empty()) result = from;
    }
  }
  return result;
}

PlanSpecs parse_plan(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule) {
  PlanSpecs plan;
  for (const auto& t : schedule.specs) plan.specs[t.tensor] = ir::parse_spec(t.spec, mesh.rank());
  std::optional<ir::RecomputeSegments> segments;
  for (const auto& d : schedule.directives) {
    if (d.kind == ir::DirectiveKind::checkpoint) {
      const auto v = graph.find(d.node);
      if (!v) throw std::invalid_argument("schedule: checkpoint on unknown node '" + d.node + "'");
      if (!segments) segments = ir::recompute_segments(graph, graph.topological_order());
      if (!ir::may_recompute(graph, *segments, *v)) {
        throw std::invalid_argument("schedule: checkpoint on '" + d.node + "', whose output is read outside its segment");
      }
      plan.recompute.insert(d.node);
      continue;
    }
    if (d.kind != ir::DirectiveKind::sync) continue;
    if (!graph.find(d.node)) throw std::invalid_argument("schedule: sync on unknown node '" + d.node + "'");
    const auto arrow = d.sync_op.find("->");
    if (arrow == std::string::npos) throw std::invalid_argument("schedule: bad sync '" + d.sync_op + "'");
    auto pair = std::make_pair(ir::parse_spec(d.sync_op.substr(0, arrow), mesh.rank()),
                               ir::parse_spec(d.sync_op.substr(arrow + 2), mesh.rank()));
    if (d.mode == "fwd_pre") {
      plan.pre[{d.node, d.arg < 0 ? 0 : d.arg}] = std::move(pair);
    } else {
      plan.post[d.node].push_back(std::move(pair));
    }
  }
  return plan;
}

PlanSpecs replicated_plan(const ir::Graph& graph) {
  PlanSpecs plan;
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    plan.specs[node.name] = ir::replicated(static_cast<int>(node.type.shape.size()));
    for (const ir::Param& p : node.params) {
      plan.specs[node.name + "." + p.name] = ir::replicated(static_cast<int>(p.type.shape.size()));
    }
  }
  return plan;
}

KernelCall saved_call(const ir::Node& node, const SavedOp& saved, const std::vector<const Tensor*>& params) {
  KernelCall call{node, {}, {}, saved.out_shape, saved.in_offsets, saved.weight_offsets};
  for (const auto& t : saved.inputs) call.inputs.push_back(&t);
  for (std::size_t p = 0; p < node.params.size(); ++p) call.params[node.params[p].name] = params.at(p);
  return call;
}

std::function<Tensor(const Tensor&)> row_exchange_hook(const ir::Graph& graph, ir::Vertex v, const SavedOp& saved,
                                                       PricedResharder& resharder) {
  const ir::Node& node = graph.node(v);
  const std::string& normalized = ir::op_info(node.kind, node.name).normalized;
  if (normalized.empty() || saved.input_specs.empty()) return {};
  const ir::ShardingRule rule = ir::rule_for(graph, v);
  const ir::Spec& spec = saved.input_specs[0];
  const std::size_t first = rule.operands[0].size() - spec.dims.size();  // the spec describes the trailing dims
  std::vector<int> axes;
  for (std::size_t d = first; d < rule.operands[0].size(); ++d) {
    for (int f : rule.operands[0][d]) {
      const std::string& name = rule.factors[f].name;
      if (name.size() != 1 || normalized.find(name[0]) == std::string::npos) continue;
      axes.insert(axes.end(), spec.dims[d - first].begin(), spec.dims[d - first].end());
    }
  }
  if (axes.empty()) return {};
  std::sort(axes.begin(), axes.end());
  return [&resharder, axes](const Tensor& local) {
    const costs::RowExchange exchange = costs::row_exchange(local.shape.at(0), axes, resharder.mesh());
    return resharder.move(local, exchange.type, exchange.from, exchange.to);
  };
}

std::vector<const Tensor*> kernel_params(const ir::Graph& graph, ir::Vertex v, const std::vector<const Tensor*>& uses,
                                         bool leader, std::vector<Tensor>& zeroed) {
  std::vector<const Tensor*> out = uses;
  if (leader || uses.empty()) return out;
  const auto contracted = contracted_params(graph, v);
  zeroed.clear();
  zeroed.reserve(uses.size());  // no reallocation: `out` points into it
  for (std::size_t p = 0; p < uses.size(); ++p) {
    if (contracted[p]) continue;
    zeroed.push_back(zeros(uses[p]->shape));
    out[p] = &zeroed.back();
  }
  return out;
}

std::vector<int64_t> shard_offsets(const std::vector<int64_t>& shape, const ir::Spec& spec, const ir::Mesh& mesh,
                                   const std::vector<int>& coords) {
  std::vector<int64_t> out(shape.size(), 0);
  const auto local = ir::local_shape(shape, spec, mesh);
  const std::size_t first = shape.size() - spec.dims.size();
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    int64_t index = 0;
    for (int axis : spec.dims[d]) index = index * mesh.shape[axis] + coords[axis];
    out[first + d] = spec.blocks_of(static_cast<int>(d)) == 1 ? index * local[first + d] : -1;
  }
  return out;
}

bool partial_leader(const std::vector<int>& partial, const std::vector<int>& coords) {
  return std::all_of(partial.begin(), partial.end(), [&](int axis) { return coords[axis] == 0; });
}

std::vector<bool> contracted_params(const ir::Graph& graph, ir::Vertex v) {
  const ir::Node& node = graph.node(v);
  const ir::ShardingRule rule = ir::rule_for(graph, v);
  const std::size_t first = rule.operands.size() - node.params.size();
  std::vector<bool> out(node.params.size(), false);
  for (std::size_t p = 0; p < node.params.size(); ++p) {
    for (const auto& dim : rule.operands[first + p]) {
      for (int f : dim) out[p] = out[p] || rule.factors[f].kind == ir::FactorKind::reduction;
    }
  }
  return out;
}

ForwardPass::ForwardPass(const ir::Graph& graph, const PlanSpecs& plan, PricedResharder& resharder,
                         const std::map<std::string, KernelFn>& kernels, ForwardSources sources, bool keep)
    : graph_(graph), plan_(plan), resharder_(resharder), kernels_(kernels), sources_(sources), keep_(keep) {
  if (keep_ && !sources_.param_uses) throw std::invalid_argument("a kept forward pass needs its parameter uses");
}

const SavedOp* ForwardPass::saved(const std::string& name) const {
  auto it = saved_.find(name);
  return it == saved_.end() ? nullptr : &it->second;
}

ForwardPass::~ForwardPass() { *alive_ = false; }

void ForwardPass::run() {
  // How many operand uses each value still has: without keep a value is
  // dropped after its last use, so a rank holds the live tensors only
  // (output nodes stay); with keep only a checkpointed op's value and call
  // are, to be recomputed. With a ledger, the ledger frees as planned.
  std::map<std::string, std::size_t> uses_left;
  const auto order = graph_.topological_order();
  for (ir::Vertex v : order) uses_left[graph_.node(v).name] = graph_.users_of(v).size();
  auto last_use = [&](const ir::Node& node) {
    if (keep_ ? plan_.recompute.count(node.name) == 0 : node.kind == ir::kOutput) return;
    values_.erase(node.name);
    saved_.erase(node.name);
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    const ir::Vertex v = order[i];
    if (ledger_) ledger_->begin(static_cast<int64_t>(i));
    step(v);
    if (ledger_) continue;
    if (uses_left[graph_.node(v).name] == 0 && keep_) last_use(graph_.node(v));
    for (ir::Vertex u : graph_.inputs_of(v)) {
      if (--uses_left[graph_.node(u).name] == 0) last_use(graph_.node(u));
    }
  }
}

void ForwardPass::recompute(ir::Vertex v) {
  if (!keep_ || plan_.recompute.count(graph_.node(v).name) == 0) {
    throw std::invalid_argument("recompute of '" + graph_.node(v).name + "', which is not checkpointed");
  }
  step(v);
}

void ForwardPass::store(const ir::Node& node, Tensor value) {
  round_in_place(value, node.type.dtype);  // an input of a 16-bit dtype; a result is rounded already
  Tensor& held = values_[node.name] = std::move(value);
  if (!ledger_) return;
  ledger_->hold(node.name, held_bytes(held), [this, alive = alive_, name = node.name] {
    if (*alive) release(name);
  });
}

void ForwardPass::release(const std::string& name) {
  values_.erase(name);
  saved_.erase(name);
  if (const auto it = saved_extra_.find(name); it != saved_extra_.end()) {
    saved_transient_ -= it->second;
    saved_extra_.erase(it);
    if (ledger_) ledger_->transient("saved for the backward", saved_transient_);
  }
}

Tensor ForwardPass::local_param(const ir::Node& node, const ir::Param& p, const std::vector<int>& coords) const {
  const std::string use = node.name + "." + p.name;
  const std::string full = p.tied_to.empty() ? use : p.tied_to;
  const Tensor* given = nullptr;
  if (sources_.params) {
    if (auto it = sources_.params->find(full); it != sources_.params->end()) given = &it->second;
  }
  const Tensor whole = given ? *given : init_param(full, p.type.shape, sources_.seed);
  if (whole.shape != p.type.shape) {
    throw std::invalid_argument("parameter '" + full + "' has shape " + ir::shape_string(whole.shape) + ", the graph needs " +
                                ir::shape_string(p.type.shape));
  }
  return rounded(local_shard(whole, plan_.of(use), resharder_.mesh(), coords), p.type.dtype);
}

void ForwardPass::step(ir::Vertex v) {
  const ir::Node& node = graph_.node(v);
  const ir::Mesh& mesh = resharder_.mesh();
  const auto coords = resharder_.comm().coords();
  if (node.kind == ir::kPlaceholder) {
    if (sources_.local_inputs) {
      if (const auto local = sources_.local_inputs->find(node.name); local != sources_.local_inputs->end()) {
        const auto want = ir::local_shape(node.type.shape, plan_.of(node.name), mesh);
        if (local->second.shape != want) {
          throw std::invalid_argument("input '" + node.name + "': the local shard has shape " +
                                      ir::shape_string(local->second.shape) + ", its spec needs " + ir::shape_string(want));
        }
        store(node, local->second);
        return;
      }
    }
    const Tensor* given = nullptr;
    if (sources_.inputs) {
      if (auto it = sources_.inputs->find(node.name); it != sources_.inputs->end()) given = &it->second;
    }
    Tensor whole = given ? *given : init_input(node, sources_.seed, input_vocab_limit(graph_, v));
    if (whole.shape != node.type.shape) {
      throw std::invalid_argument("input '" + node.name + "' has shape " + ir::shape_string(whole.shape) +
                                  ", the graph needs " + ir::shape_string(node.type.shape));
    }
    store(node, local_shard(whole, plan_.of(node.name), mesh, coords));
    whole_inputs_[node.name] = std::move(whole);  // the harness's (labels, --check): not the plan's memory
    return;
  }
  // Operands, resharded by fwd_pre syncs (or, for the graph output, by the producer's fwd_post).
  SavedOp op;
  int64_t scratch = 0;  // transient bytes of this step: resharded operands, a partial result, a tied parameter's copy
  int64_t saved_extra = 0;  // of those, what a kept call saves for the backward
  const auto producers = graph_.inputs_of(v);
  for (std::size_t i = 0; i < producers.size(); ++i) {
    const ir::Node& producer = graph_.node(producers[i]);
    ir::Spec spec = plan_.of(producer.name);
    if (ledger_) ledger_->read(producer.name);
    Tensor value = values_.at(producer.name);
    if (auto it = plan_.pre.find({node.name, static_cast<int>(i)}); it != plan_.pre.end()) {
      if (it->second.first != spec) {
        throw std::invalid_argument("schedule: fwd_pre sync on '" + node.name + "' starts from the wrong spec");
      }
      value = resharder_.move(value, producer.type, spec, it->second.second);
      spec = it->second.second;
    } else if (node.kind == ir::kOutput) {
      if (auto post = plan_.post.find(producer.name); post != plan_.post.end()) {
        for (const auto& [from, to] : post->second) {
          if (from == spec) {
            value = resharder_.move(value, producer.type, spec, to);
            spec = to;
          }
        }
      }
    }
    if (spec != plan_.of(producer.name)) {
      scratch += held_bytes(value);
      saved_extra += held_bytes(value);
    }
    op.inputs.push_back(std::move(value));
    op.input_specs.push_back(spec);
  }
  // Reports this step's transient buffers to the ledger, and what the kept call saves.
  auto report = [&] {
    if (!ledger_) return;
    ledger_->transient("scratch", scratch);
    ledger_->transient("scratch", 0);
    if (!keep_ || saved_extra == 0) return;
    saved_extra_[node.name] = saved_extra;
    saved_transient_ += saved_extra;
    ledger_->transient("saved for the backward", saved_transient_);
  };
  if (node.kind == ir::kOutput) {
    store(node, op.inputs.at(0));
    if (keep_) {
      op.result = op.input_specs.at(0);
      op.output = op.inputs.at(0);
      saved_[node.name] = std::move(op);
    }
    report();
    return;
  }
  const ir::Spec& output = plan_.of(node.name);
  op.result = plan_.result_of(node.name);
  // The parameters: in training taken from the uses just before the op (a
  // gathered copy, given back after it), in inference sliced from the whole.
  std::vector<Tensor> owned;  // inference: each parameter's local shard
  owned.reserve(node.params.size());
  std::vector<const Tensor*> uses;
  for (const ir::Param& p : node.params) {
    if (sources_.param_uses) {
      uses.push_back(&sources_.param_uses->take(node, p));
    } else {
      owned.push_back(local_param(node, p, coords));
      uses.push_back(&owned.back());
      if (ledger_) hold_param(node, p, owned.back(), scratch);
    }
    if (p.name == "weight") op.weight_offsets = shard_offsets(p.type.shape, plan_.of(node.name + "." + p.name), mesh, coords);
  }
  op.out_shape = ir::local_shape(node.type.shape, op.result, mesh);
  if (!producers.empty()) {
    op.in_offsets = shard_offsets(graph_.node(producers[0]).type.shape, op.input_specs[0], mesh, coords);
  }
  // A partial result is a sum over ranks: a parameter that is added rather
  // than contracted (no reduction factor: a bias) joins the sum once, on the
  // rank at coordinate 0 of every partial axis.
  op.leader = partial_leader(op.result.partial, coords);
  std::vector<Tensor> zeroed;
  const std::vector<const Tensor*> params = kernel_params(graph_, v, uses, op.leader, zeroed);
  const auto kernel = kernels_.find(node.kind);
  if (kernel == kernels_.end()) throw std::invalid_argument("no kernel for node '" + node.name + "' (" + node.kind + ")");
  KernelCall call = saved_call(node, op, params);
  call.exchange = row_exchange_hook(graph_, v, op, resharder_);
  Tensor local = kernel->second(call);
  round_in_place(local, node.type.dtype);  // each op's result rounded once into its dtype's storage (fp32 inside the kernel)
  if (sources_.param_uses) sources_.param_uses->give_back(node);  // a gathered copy lives for the op alone
  if (local.shape != op.out_shape) {
    throw std::invalid_argument("node '" + node.name + "': the local result has shape " + ir::shape_string(local.shape) +
                                ", the schedule's spec needs " + ir::shape_string(op.out_shape));
  }
  if (op.result != output) {
    scratch += held_bytes(local);
    saved_extra += held_bytes(local);
  }
  store(node, op.result == output ? local : resharder_.move(local, node.type, op.result, output));
  if (keep_) {
    op.output = std::move(local);
    saved_[node.name] = std::move(op);
  }
  report();
}

void ForwardPass::hold_param(const ir::Node& node, const ir::Param& p, const Tensor& local, int64_t& scratch) {
  const std::string use = node.name + "." + p.name;
  const std::string full = p.tied_to.empty() ? use : p.tied_to;
  ledger_->read(full);  // the stored parameter (a tied use reads the one it is tied to)
  if (!p.tied_to.empty()) {
    // Inference: the tied parameter is held as planned under its own name; a use in another spec reads a copy.
    if (plan_.specs.count(full) && plan_.of(full) != plan_.of(use)) scratch += held_bytes(local);
    return;
  }
  // Inference: the op's node holds its parameters over the node's interval (synth/memory_ledger.hpp).
  const Tensor& held = held_params_[use] = local;
  ledger_->hold(use, held_bytes(held), [this, alive = alive_, use] {
    if (*alive) held_params_.erase(use);
  });
}

}  // namespace shardsynth::runtime
