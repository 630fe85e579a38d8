#include "synth/memory_ledger.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "costs/op_cost.hpp"
#include "costs/param_storage.hpp"
#include "synth/followers.hpp"

namespace shardsynth::synth {
namespace {

ir::LiveSpan node_span(const Lowered& lowered, int node) {
  const ProblemNode& n = lowered.problem.nodes.at(node);
  return {n.live_from, n.live_to};
}

// The spans of `spans`, ascending, empty ones dropped and touching ones merged.
std::vector<ir::LiveSpan> merged(std::vector<ir::LiveSpan> spans) {
  std::sort(spans.begin(), spans.end(), [](const ir::LiveSpan& a, const ir::LiveSpan& b) { return a.from < b.from; });
  std::vector<ir::LiveSpan> out;
  for (const auto& span : spans) {
    if (span.from >= span.to) continue;
    if (!out.empty() && span.from <= out.back().to) {
      out.back().to = std::max(out.back().to, span.to);
    } else {
      out.push_back(span);
    }
  }
  return out;
}

// The intervals op node `node` holds its outputs over: its own and, when it
// may recompute (synth/recompute.hpp), its saved follower's while kept and
// its recomputed follower's.
std::vector<ir::LiveSpan> held_spans(const Lowered& lowered, const Assignment& assignment,
                                     const std::vector<std::vector<int>>& followers, int node) {
  std::vector<ir::LiveSpan> spans = {node_span(lowered, node)};
  const bool recomputes = lowered.nodes[node].strategies[assignment[node]].recompute;
  for (int f : followers[node]) {
    const FollowerKind kind = lowered.nodes[f].holds;
    if (kind == FollowerKind::recomputed || (kind == FollowerKind::saved && !recomputes)) {
      spans.push_back(node_span(lowered, f));
    }
  }
  return merged(std::move(spans));
}

}  // namespace

std::vector<ir::PlannedTensor> memory_ledger(const Lowered& lowered, const Assignment& assignment) {
  using ir::MemoryCategory;
  std::vector<ir::PlannedTensor> out;
  const ir::Graph& graph = lowered.graph;
  const auto followers = followers_of(lowered);
  std::map<std::pair<ir::Vertex, int>, std::vector<int>> gathered;  // (op, param) -> its gathered followers
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    const NodeLabel& label = lowered.nodes[n];
    if (label.holds == FollowerKind::gathered) gathered[{label.vertex, label.param}].push_back(static_cast<int>(n));
  }
  // A parameter's gathered copy (training): over its followers' steps, when it has bytes.
  auto gathered_copy = [&](ir::Vertex v, int p, const std::string& name) {
    const auto it = gathered.find({v, p});
    if (it == gathered.end()) return;
    int64_t bytes = 0;
    std::vector<ir::LiveSpan> spans;
    for (int f : it->second) {
      bytes = lowered.problem.nodes[f].usages[assignment[f]];
      spans.push_back(node_span(lowered, f));
    }
    if (bytes > 0) out.push_back({name + ir::kGatheredSuffix, MemoryCategory::transient, bytes, merged(std::move(spans))});
  };
  for (ir::Vertex v : lowered.order) {
    const ir::Node& node = graph.node(v);
    const int owner = lowered.owner[v];
    int params_follower = -1;  // inference: the follower holding its op's parameters
    for (int f : followers[owner]) {
      if (lowered.nodes[f].holds == FollowerKind::params) params_follower = f;
    }
    out.push_back({node.name, MemoryCategory::activation,
                   costs::activation_bytes(node.type, output_spec(lowered, assignment, v), lowered.mesh),
                   held_spans(lowered, assignment, followers, owner)});
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      const ir::Param& param = node.params[p];
      const std::string name = node.name + "." + param.name;
      if (!param.tied_to.empty()) {  // held by the parameter it is tied to; a copy around its uses in training
        gathered_copy(v, static_cast<int>(p), name);
        continue;
      }
      if (const auto held = storage_choice(lowered, assignment, v, static_cast<int>(p))) {
        const auto bytes = costs::storage_bytes(param.type, held->storage, lowered.mesh, lowered.options.precision);
        const ir::LiveSpan span = node_span(lowered, lowered.storage[v][p]);
        out.push_back({name, MemoryCategory::param, bytes.param, {span}});
        out.push_back({name + ir::kGradSuffix, MemoryCategory::grad, bytes.grad, {span}});
        out.push_back({name + ir::kStateSuffix, MemoryCategory::optimizer, bytes.state, {span}});
        gathered_copy(v, static_cast<int>(p), name);
        continue;
      }
      // Inference: on its op's params follower, the whole step.
      if (params_follower < 0) throw std::logic_error("memory_ledger: '" + name + "' has no node holding it");
      const ir::Spec& spec = param_spec(lowered, v, static_cast<int>(p), assignment[owner]);
      out.push_back({name, MemoryCategory::param,
                     costs::param_bytes(lowered.options.mode, param.type, spec, lowered.mesh, lowered.options.precision),
                     {node_span(lowered, params_follower)}});
    }
  }
  return out;
}

std::vector<int64_t> ledger_usage(const std::vector<ir::PlannedTensor>& tensors, int64_t steps) {
  std::vector<int64_t> out(static_cast<std::size_t>(std::max<int64_t>(steps, 0)), 0);
  for (const auto& t : tensors) {
    for (const auto& span : t.live) {
      for (int64_t s = std::max<int64_t>(span.from, 0); s < std::min(span.to, steps); ++s) out[s] += t.bytes;
    }
  }
  return out;
}

}  // namespace shardsynth::synth
