#include "synth/recompute.hpp"

#include <algorithm>
#include <string>

#include "synth/followers.hpp"
#include "synth/liveness.hpp"

namespace shardsynth::synth {

void add_saved_nodes(Lowered& out, const ir::RecomputeSegments& segments) {
  const StepClock clock{out.options.mode, static_cast<int64_t>(out.order.size())};
  std::vector<std::vector<ir::Vertex>> owned(out.problem.nodes.size());
  for (ir::Vertex v : out.order) owned[out.owner[v]].push_back(v);
  const std::size_t ops = out.problem.nodes.size();
  for (std::size_t n = 0; n < ops; ++n) {
    const NodeLabel& label = out.nodes[n];
    if (label.role != NodeRole::op) continue;
    const bool twins = std::any_of(label.strategies.begin(), label.strategies.end(),
                                   [](const StrategyInfo& s) { return s.recompute; });
    if (!twins) continue;
    bool recomputable = true;
    int64_t last_read = 0;
    for (ir::Vertex v : owned[n]) {
      recomputable = recomputable && ir::may_recompute(out.graph, segments, v) &&
                     segments.segment[v] == segments.segment[label.vertex];
      last_read = std::max(last_read, segments.last_read[v]);
    }
    ProblemNode& node = out.problem.nodes[n];
    if (!recomputable) {
      for (std::size_t s = 0; s < label.strategies.size(); ++s) {
        if (label.strategies[s].recompute) node.costs[s] = kForbidden;
      }
      continue;
    }
    const int64_t to = node.live_to;
    const int64_t again = clock.backward(segments.segment_end[segments.segment[label.vertex]]);
    const int64_t read_until = clock.forward(last_read) + 1;
    node.live_to = read_until;
    const std::vector<int64_t> bytes = node.usages;
    std::vector<int64_t> kept(bytes.size());
    for (std::size_t s = 0; s < bytes.size(); ++s) kept[s] = label.strategies[s].recompute ? 0 : bytes[s];
    const std::string name = node.label;
    if (read_until < again) {
      add_follower(out, static_cast<int>(n), FollowerKind::saved, -1, name + ":saved", {read_until, again}, kept);
    }
    add_follower(out, static_cast<int>(n), FollowerKind::recomputed, -1, name + ":recomputed", {again, to}, bytes);
  }
}

std::vector<int> recomputed_nodes(const Lowered& lowered, const Assignment& assignment) {
  std::vector<int> nodes;
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    if (lowered.nodes[n].role == NodeRole::op && lowered.nodes[n].strategies[assignment[n]].recompute) {
      nodes.push_back(static_cast<int>(n));
    }
  }
  return nodes;
}

}  // namespace shardsynth::synth
