#include "slapo_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace dsl {

namespace ir = shardsynth::ir;

ModuleSchedule& ModuleSchedule::shard(const std::string& param, int dim) {
  const auto it = std::find_if(node_.params.begin(), node_.params.end(), [&](const ir::Param& p) { return p.name == param; });
  if (it == node_.params.end()) throw std::invalid_argument("sch[\"" + node_.name + "\"] has no parameter '" + param + "'");
  if (dim < 0 || dim >= static_cast<int>(it->type.shape.size())) {
    throw std::invalid_argument("sch[\"" + node_.name + "\"].shard(\"" + param + "\", " + std::to_string(dim) +
                                "): the parameter has " + std::to_string(it->type.shape.size()) + " dims");
  }
  ir::Directive d;
  d.kind = ir::DirectiveKind::shard;
  d.node = node_.name;
  d.param = param;
  d.dim = dim;
  owner_.record(std::move(d));
  return *this;
}

ModuleSchedule& ModuleSchedule::sync(const std::string& mode, const std::string& sync_op_or_fn, int arg) {
  if (mode != "fwd_pre" && mode != "fwd_post") throw std::invalid_argument("sync mode '" + mode + "': fwd_pre or fwd_post");
  if (sync_op_or_fn.find("->") == std::string::npos) {
    throw std::invalid_argument("sync_op_or_fn '" + sync_op_or_fn + "': expected FROM->TO");
  }
  ir::Directive d;
  d.kind = ir::DirectiveKind::sync;
  d.node = node_.name;
  d.mode = mode;
  d.sync_op = sync_op_or_fn;
  d.arg = arg;
  owner_.record(std::move(d));
  return *this;
}

Schedule::Schedule(const ir::Graph& graph, ir::Mesh mesh) : graph_(graph), mesh_(std::move(mesh)) {}

ModuleSchedule& Schedule::operator[](const std::string& name) {
  const auto v = graph_.find(name);
  if (!v) throw std::invalid_argument("sch[\"" + name + "\"]: the model has no module '" + name + "'");
  return modules_.try_emplace(name, *this, graph_.node(*v)).first->second;
}

void Schedule::record(ir::Directive directive) {
  if (filling_ && std::find(directives_.begin(), directives_.end(), directive) != directives_.end()) return;
  directives_.push_back(std::move(directive));
  by_user_.push_back(!filling_);
}

std::vector<shardsynth::synth::Pin> Schedule::pins() const {
  if (mesh_.rank() != 1) throw std::invalid_argument("pins from shard() calls need a 1-D mesh");
  std::vector<shardsynth::synth::Pin> out;
  for (const auto& d : directives_) {
    if (d.kind != ir::DirectiveKind::shard) continue;
    const ir::Node& node = graph_.node(*graph_.find(d.node));
    for (const auto& p : node.params) {
      if (p.name != d.param) continue;
      std::string spec(p.type.shape.size(), 'R');
      spec[static_cast<std::size_t>(d.dim)] = 'S';
      out.push_back({d.node + "." + d.param, spec, shardsynth::synth::PinKind::fix});
    }
  }
  return out;
}

void Schedule::fill_from(const ir::Schedule& plan) {
  filling_ = true;
  for (const auto& d : plan.directives) {
    if (d.kind == ir::DirectiveKind::shard) {
      if (d.blocks != 1 || !d.axes.empty()) throw std::invalid_argument("blocked or multi-axis shards are not in this DSL");
      (*this)[d.node].shard(d.param, d.dim);
    } else {
      (*this)[d.node].sync(d.mode, d.sync_op, d.arg);
    }
  }
  filling_ = false;
}

std::string Schedule::to_python() const {
  std::string out;
  for (const auto& d : directives_) out += ir::to_text(d) + "\n";
  return out;
}

ir::Schedule Schedule::to_ir(const ir::Schedule& plan) const {
  for (const auto& d : directives_) {
    if (std::find(plan.directives.begin(), plan.directives.end(), d) == plan.directives.end()) {
      throw std::invalid_argument("the directive " + ir::to_text(d) + " is not part of the plan");
    }
  }
  ir::Schedule out = plan;
  out.directives.clear();
  for (const auto& d : plan.directives) {
    if (std::find(directives_.begin(), directives_.end(), d) == directives_.end()) {
      throw std::invalid_argument("the plan's directive " + ir::to_text(d) + " was not recorded");
    }
    out.directives.push_back(d);
  }
  return out;
}

}  // namespace dsl
