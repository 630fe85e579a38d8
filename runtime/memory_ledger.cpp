#include "runtime/memory_ledger.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "ir/dtype.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"
#include "runtime/forward_pass.hpp"

namespace shardsynth::runtime {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int64_t shard_bytes(std::size_t elements, ir::DType dtype) { return static_cast<int64_t>(elements) * ir::dtype_bytes(dtype); }

std::vector<std::string> step_names(const ir::Graph& graph, bool training) {
  std::vector<std::string> out;
  const auto order = graph.topological_order();
  for (ir::Vertex v : order) out.push_back("forward of " + graph.node(v).name);
  if (!training) return out;
  for (auto it = order.rbegin(); it != order.rend(); ++it) out.push_back("backward of " + graph.node(*it).name);
  out.push_back("optimizer");
  return out;
}

int64_t planned_local_bytes(const ir::Graph& graph, const ir::Mesh& mesh, const PlanSpecs& plan,
                            const ir::PlannedTensor& tensor) {
  auto elements = [&](const std::vector<int64_t>& shape, const ir::Spec& spec) {
    return ir::num_elements(ir::local_shape(shape, spec, mesh));
  };
  if (tensor.category == ir::MemoryCategory::activation) {
    const auto v = graph.find(tensor.name);
    if (!v) throw std::invalid_argument("memory plan: tensor '" + tensor.name + "', which the graph lacks");
    const ir::TensorType& type = graph.node(*v).type;
    return elements(type.shape, plan.of(tensor.name)) * ir::dtype_bytes(type.dtype);
  }
  std::string use = tensor.name;
  for (const char* suffix : {ir::kGradSuffix, ir::kStateSuffix, ir::kGatheredSuffix}) {
    if (ends_with(use, suffix)) use.resize(use.size() - std::string(suffix).size());
  }
  const auto dot = use.rfind('.');
  const auto v = dot == std::string::npos ? std::nullopt : graph.find(use.substr(0, dot));
  const ir::Param* param = nullptr;
  if (v) {
    for (const ir::Param& p : graph.node(*v).params) {
      if (p.name == use.substr(dot + 1)) param = &p;
    }
  }
  if (!param) throw std::invalid_argument("memory plan: tensor '" + tensor.name + "', which the graph lacks");
  // The storage entries a training plan names; one left out is the one before it (ir::kStoredSuffix).
  auto spec_or = [&](const std::string& name, const ir::Spec& fallback) {
    const auto it = plan.specs.find(name);
    return it == plan.specs.end() ? fallback : it->second;
  };
  const ir::Spec stored = spec_or(use + ir::kStoredSuffix, plan.of(use));
  const ir::Spec grad = spec_or(use + ir::kGradSuffix, stored);
  const ir::Spec state = spec_or(use + ir::kStateSuffix, grad);
  switch (tensor.category) {
    case ir::MemoryCategory::grad: return elements(param->type.shape, grad) * ir::dtype_bytes(param->type.dtype);
    case ir::MemoryCategory::optimizer: return elements(param->type.shape, state) * 2 * static_cast<int64_t>(sizeof(float));
    case ir::MemoryCategory::transient: return elements(param->type.shape, plan.of(use)) * ir::dtype_bytes(param->type.dtype);
    default: return elements(param->type.shape, stored) * ir::dtype_bytes(param->type.dtype);
  }
}

MemoryLedger::MemoryLedger(std::vector<ir::PlannedTensor> planned, std::vector<std::string> steps, LocalBytes local_bytes)
    : steps_(std::move(steps)), local_bytes_(std::move(local_bytes)) {
  for (auto& t : planned) {
    index_[t.name] = entries_.size();
    entries_.push_back({std::move(t), false, 0, {}});
  }
}

bool MemoryLedger::live_at(const Entry& e, int64_t step) const {
  return std::any_of(e.tensor.live.begin(), e.tensor.live.end(),
                     [&](const ir::LiveSpan& s) { return s.from <= step && step < s.to; });
}

void MemoryLedger::outside(const std::string& name, const char* verb) const {
  const std::string at = step_ >= 0 && step_ < static_cast<int64_t>(steps_.size())
                             ? steps_[step_]
                             : "after the last step";
  throw std::runtime_error("memory plan: tensor '" + name + "' " + verb + " at time step " + std::to_string(step_) +
                           " (" + at + "), outside its planned interval");
}

void MemoryLedger::record() {
  if (step_ < 0) return;
  MemoryBytes held;
  for (const Entry& e : entries_) {
    if (!e.live) continue;
    switch (e.tensor.category) {
      case ir::MemoryCategory::param: held.params += e.bytes; break;
      case ir::MemoryCategory::grad: held.grads += e.bytes; break;
      case ir::MemoryCategory::optimizer: held.optimizer += e.bytes; break;
      case ir::MemoryCategory::activation: held.activations += e.bytes; break;
      case ir::MemoryCategory::transient: held.transient += e.bytes; break;
    }
  }
  measured_.steps.push_back(held);
  measured_.transient_steps.push_back(kind_max_);
  if (held.total() > peak_) {
    peak_ = held.total();
    measured_.peak_step = step_;
    measured_.peak_at = step_ < static_cast<int64_t>(steps_.size()) ? steps_[step_] : "";
    measured_.at_peak = held;
    measured_.transient_at_peak = step_transient_;
    measured_.transient_kinds = step_kinds_;
  }
  measured_.transient_max = std::max(measured_.transient_max, step_transient_);
}

void MemoryLedger::begin(int64_t step) {
  if (step == step_) return;
  if (step != step_ + 1) {
    throw std::logic_error("memory ledger: time step " + std::to_string(step) + " after " + std::to_string(step_));
  }
  record();
  step_ = step;
  int64_t transient = 0;
  for (const auto& [what, bytes] : transients_) transient += bytes;
  step_transient_ = transient;
  step_kinds_ = transients_;
  kind_max_ = transients_;
  for (Entry& e : entries_) {
    const bool live = live_at(e, step);
    if (e.live && !live) {
      if (e.release) e.release();
      e.release = nullptr;
      e.bytes = 0;
    } else if (!e.live && live) {
      e.bytes = local_bytes_(e.tensor);  // reserved until the executor fills it
    }
    e.live = live;
  }
}

void MemoryLedger::finish() {
  record();
  step_ = static_cast<int64_t>(steps_.size());
}

void MemoryLedger::hold(const std::string& name, int64_t bytes, std::function<void()> release) {
  const auto it = index_.find(name);
  if (it == index_.end()) return;
  Entry& e = entries_[it->second];
  if (!e.live) outside(name, "is held");
  e.bytes = bytes;
  e.release = std::move(release);
}

void MemoryLedger::read(const std::string& name) const {
  const auto it = index_.find(name);
  if (it != index_.end() && !entries_[it->second].live) outside(name, "is read");
}

void MemoryLedger::transient(const std::string& what, int64_t bytes) {
  transients_[what] = bytes;
  kind_max_[what] = std::max(kind_max_[what], bytes);
  int64_t sum = 0;
  for (const auto& [kind, held] : transients_) sum += held;
  if (sum > step_transient_) {
    step_transient_ = sum;
    step_kinds_ = transients_;
  }
}

MemoryMeasured larger(const MemoryMeasured& a, const MemoryMeasured& b) {
  MemoryMeasured out = b.at_peak.total() > a.at_peak.total() ? b : a;
  out.transient_max = std::max(a.transient_max, b.transient_max);
  return out;
}

}  // namespace shardsynth::runtime
