#include "synth/problem.hpp"

#include <algorithm>
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

std::vector<std::vector<Incidence>> incidence_lists(const Problem& p) {
  std::vector<std::vector<Incidence>> out(p.nodes.size());
  for (std::size_t e = 0; e < p.edges.size(); ++e) {
    const auto& edge = p.edges[e];
    out[edge.from].push_back({static_cast<int>(e), true, edge.to});
    out[edge.to].push_back({static_cast<int>(e), false, edge.from});
  }
  return out;
}

int64_t cost_without_usage(const Problem& p, const Assignment& a) {
  int64_t total = 0;
  for (std::size_t i = 0; i < a.size(); ++i) total = cost_add(total, p.nodes[i].costs[a[i]]);
  for (const auto& edge : p.edges) total = cost_add(total, edge_cost(p, edge, a));
  return total;
}

bool within_usage_limit(const Problem& p, const Assignment& a) {
  if (!p.usage_limit) return true;
  // Sweep the interval ends in time order: usage only rises at a live_from.
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, usage delta); ends sort before starts at the same time
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& node = p.nodes[i];
    if (node.live_from >= node.live_to || node.usages.empty()) continue;
    events.emplace_back(node.live_from, node.usages[a[i]]);
    events.emplace_back(node.live_to, -node.usages[a[i]]);
  }
  std::sort(events.begin(), events.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second < y.second;
  });
  int64_t used = 0;
  for (std::size_t k = 0; k < events.size(); ++k) {
    used += events[k].second;
    const bool last_at_time = k + 1 == events.size() || events[k + 1].first != events[k].first;
    if (last_at_time && used > *p.usage_limit) return false;
  }
  return true;
}

std::vector<std::vector<int>> usage_rows(const Problem& problem) {
  std::set<std::vector<int>> seen;
  std::vector<std::vector<int>> rows;
  for (int64_t t : usage_check_points(problem)) {
    std::vector<int> live;
    for (std::size_t i = 0; i < problem.nodes.size(); ++i) {
      const auto& node = problem.nodes[i];
      if (node.live_from <= t && t < node.live_to && !node.usages.empty()) live.push_back(static_cast<int>(i));
    }
    if (!live.empty() && seen.insert(live).second) rows.push_back(std::move(live));
  }
  std::vector<std::vector<int>> kept;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    bool contained = false;
    for (std::size_t o = 0; o < rows.size() && !contained; ++o) {
      contained = o != r && rows[o].size() > rows[r].size() &&
                  std::includes(rows[o].begin(), rows[o].end(), rows[r].begin(), rows[r].end());
    }
    if (!contained) kept.push_back(rows[r]);
  }
  return kept;
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
