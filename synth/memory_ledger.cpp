#include "synth/memory_ledger.hpp"

#include <algorithm>
#include <string>

#include "costs/op_cost.hpp"
#include "costs/param_storage.hpp"

namespace shardsynth::synth {
namespace {

ir::LiveSpan node_span(const Lowered& lowered, int node) {
  const ProblemNode& n = lowered.problem.nodes.at(node);
  return {n.live_from, n.live_to};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The intervals op node `node` holds its outputs over: its own and, when it
// may recompute (synth/recompute.hpp), its saved node's while kept and its
// recomputed node's; ascending, touching ones merged.
std::vector<ir::LiveSpan> held_spans(const Lowered& lowered, const Assignment& assignment,
                                     const std::vector<std::vector<int>>& followers, int node) {
  std::vector<ir::LiveSpan> spans = {node_span(lowered, node)};
  const bool recomputes = lowered.nodes[node].strategies[assignment[node]].recompute;
  for (int f : followers[node]) {
    if (ends_with(lowered.problem.nodes[f].label, ":saved") && recomputes) continue;  // dropped until recomputed
    spans.push_back(node_span(lowered, f));
  }
  std::sort(spans.begin(), spans.end(), [](const ir::LiveSpan& a, const ir::LiveSpan& b) { return a.from < b.from; });
  std::vector<ir::LiveSpan> merged;
  for (const auto& span : spans) {
    if (span.from >= span.to) continue;
    if (!merged.empty() && span.from <= merged.back().to) {
      merged.back().to = std::max(merged.back().to, span.to);
    } else {
      merged.push_back(span);
    }
  }
  return merged;
}

}  // namespace

std::vector<ir::PlannedTensor> memory_ledger(const Lowered& lowered, const Assignment& assignment) {
  using ir::MemoryCategory;
  std::vector<ir::PlannedTensor> out;
  const ir::Graph& graph = lowered.graph;
  std::vector<std::vector<int>> followers(lowered.nodes.size());  // op node -> its saved nodes (recomputation)
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    if (lowered.nodes[n].role == NodeRole::saved) followers.at(lowered.nodes[n].of).push_back(static_cast<int>(n));
  }
  for (ir::Vertex v : lowered.order) {
    const ir::Node& node = graph.node(v);
    const int owner = lowered.owner[v];
    out.push_back({node.name, MemoryCategory::activation,
                   costs::activation_bytes(node.type, output_spec(lowered, assignment, v), lowered.mesh),
                   held_spans(lowered, assignment, followers, owner)});
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      const ir::Param& param = node.params[p];
      if (!param.tied_to.empty()) continue;  // held by the parameter it is tied to
      const std::string name = node.name + "." + param.name;
      if (const auto held = storage_choice(lowered, assignment, v, static_cast<int>(p))) {
        const auto bytes = costs::storage_bytes(param.type, held->storage, lowered.mesh);
        const ir::LiveSpan span = node_span(lowered, lowered.storage[v][p]);
        out.push_back({name, MemoryCategory::param, bytes.param, {span}});
        out.push_back({name + ir::kGradSuffix, MemoryCategory::grad, bytes.grad, {span}});
        out.push_back({name + ir::kStateSuffix, MemoryCategory::optimizer, bytes.state, {span}});
        continue;
      }
      const ir::Spec& spec = param_spec(lowered, v, static_cast<int>(p), assignment[owner]);
      out.push_back({name, MemoryCategory::param,
                     costs::param_bytes(lowered.options.mode, param.type, spec, lowered.mesh),
                     {node_span(lowered, owner)}});
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
