#include "synth/problem.hpp"

#include <set>
#include <stdexcept>

namespace shardsynth::synth {

void validate(const Problem& p) {
  const int n = static_cast<int>(p.nodes.size());
  for (int i = 0; i < n; ++i) {
    const auto& node = p.nodes[i];
    if (node.costs.empty()) throw std::invalid_argument("node " + std::to_string(i) + " (" + node.label + ") has no strategies");
    if (!node.usages.empty() && node.usages.size() != node.costs.size()) {
      throw std::invalid_argument("node " + std::to_string(i) + " has " + std::to_string(node.usages.size()) +
                                  " usages for " + std::to_string(node.costs.size()) + " strategies");
    }
    for (int64_t c : node.costs) {
      if (c < 0) throw std::invalid_argument("node " + std::to_string(i) + " has a negative cost");
    }
  }
  for (std::size_t e = 0; e < p.edges.size(); ++e) {
    const auto& edge = p.edges[e];
    if (edge.from < 0 || edge.from >= n || edge.to < 0 || edge.to >= n) {
      throw std::invalid_argument("edge " + std::to_string(e) + " refers to a missing node");
    }
    const std::size_t want = static_cast<std::size_t>(p.nodes[edge.from].size()) * p.nodes[edge.to].size();
    if (edge.costs.size() != want) {
      throw std::invalid_argument("edge " + std::to_string(e) + " has " + std::to_string(edge.costs.size()) +
                                  " costs, expected " + std::to_string(want));
    }
    for (int64_t c : edge.costs) {
      if (c < 0) throw std::invalid_argument("edge " + std::to_string(e) + " has a negative cost");
    }
  }
}

int64_t edge_cost(const Problem& p, const ProblemEdge& edge, const Assignment& a) {
  return edge.costs[static_cast<std::size_t>(a[edge.from]) * p.nodes[edge.to].size() + a[edge.to]];
}

std::vector<int64_t> usage_check_points(const Problem& p) {
  std::set<int64_t> points;
  for (const auto& node : p.nodes) {
    if (node.live_from < node.live_to) points.insert(node.live_from);
  }
  return {points.begin(), points.end()};
}

int64_t evaluate(const Problem& p, const Assignment& a) {
  if (a.size() != p.nodes.size()) {
    throw std::invalid_argument("assignment has " + std::to_string(a.size()) + " entries for " +
                                std::to_string(p.nodes.size()) + " nodes");
  }
  int64_t total = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] < 0 || a[i] >= p.nodes[i].size()) {
      throw std::invalid_argument("assignment picks strategy " + std::to_string(a[i]) + " of node " + std::to_string(i));
    }
    const int64_t c = p.nodes[i].costs[a[i]];
    if (c >= kForbidden) return kForbidden;
    total += c;
  }
  for (const auto& edge : p.edges) {
    const int64_t c = edge_cost(p, edge, a);
    if (c >= kForbidden) return kForbidden;
    total += c;
  }
  if (p.usage_limit) {
    for (int64_t t : usage_check_points(p)) {
      int64_t used = 0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const auto& node = p.nodes[i];
        if (node.live_from <= t && t < node.live_to && !node.usages.empty()) used += node.usages[a[i]];
      }
      if (used > *p.usage_limit) return kForbidden;
    }
  }
  return total;
}

}  // namespace shardsynth::synth
