#include "synth/solver/problem.hpp"

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
  std::vector<int64_t> points;
  for (const auto& node : p.nodes) {
    if (node.live_from < node.live_to) points.push_back(node.live_from);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
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

UsagePeak peak_usage(const Problem& p, const Assignment& a) {
  // Sweep the interval ends in time order: usage only rises at a live_from.
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, usage delta); ends sort before starts at the same time
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& node = p.nodes[i];
    if (node.live_from >= node.live_to || node.usages.empty()) continue;
    events.emplace_back(node.live_from, node.usages[a[i]]);
    events.emplace_back(node.live_to, -node.usages[a[i]]);
  }
  std::sort(events.begin(), events.end());
  UsagePeak peak;
  __int128 used = 0;  // usages up to 10^18 each: their sum may pass int64
  for (std::size_t k = 0; k < events.size(); ++k) {
    used += events[k].second;
    const bool last_at_time = k + 1 == events.size() || events[k + 1].first != events[k].first;
    if (last_at_time && used > peak.bytes) {
      peak.bytes = used >= kForbidden ? kForbidden : static_cast<int64_t>(used);
      peak.step = events[k].first;
    }
  }
  return peak;
}

UsagePeak least_peak(const Problem& p) {
  // Each node at its least allowed usage: a one-strategy problem's peak.
  Problem least;
  Assignment a;
  for (const auto& node : p.nodes) {
    int64_t low = kForbidden;
    for (int s = 0; s < node.size(); ++s) {
      if (node.costs[s] < kForbidden) low = std::min(low, node.usages[s]);
    }
    least.nodes.push_back({node.label, {0}, {low == kForbidden ? 0 : low}, node.live_from, node.live_to});
    a.push_back(0);
  }
  return peak_usage(least, a);
}

bool within_usage_limit(const Problem& p, const Assignment& a) {
  return !p.usage_limit || peak_usage(p, a).bytes <= *p.usage_limit;
}

std::vector<std::vector<int>> usage_rows(const Problem& problem) {
  // The live set at each check point, by a sweep over the nodes sorted by
  // live_from (a node stays in `live` from its start until its end passes).
  const std::vector<int64_t> points = usage_check_points(problem);
  std::vector<int> by_start;
  for (std::size_t i = 0; i < problem.nodes.size(); ++i) {
    const auto& node = problem.nodes[i];
    if (node.live_from < node.live_to && !node.usages.empty()) by_start.push_back(static_cast<int>(i));
  }
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](int a, int b) { return problem.nodes[a].live_from < problem.nodes[b].live_from; });
  std::vector<std::vector<int>> sets;  // distinct consecutive live sets, ascending node index
  std::vector<int> live;
  std::size_t next = 0;
  for (int64_t t : points) {
    while (next < by_start.size() && problem.nodes[by_start[next]].live_from <= t) live.push_back(by_start[next++]);
    std::erase_if(live, [&](int i) { return problem.nodes[i].live_to <= t; });
    std::vector<int> row = live;
    std::sort(row.begin(), row.end());
    if (!row.empty() && (sets.empty() || sets.back() != row)) sets.push_back(std::move(row));
  }
  // Intervals are convex: a node live at two check points is live at every
  // one between them, so a live set contained in a later (earlier) one is
  // contained in the next (previous) set, and equal sets are consecutive
  // unless a larger set lies between them (which drops both). Comparing each
  // set with its neighbours therefore finds every non-maximal one; the first
  // occurrence of a repeated maximal set is kept.
  auto within = [](const std::vector<int>& inner, const std::vector<int>& outer) {
    return outer.size() > inner.size() && std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
  };
  std::vector<std::vector<int>> kept;
  std::set<std::vector<int>> seen;
  for (std::size_t r = 0; r < sets.size(); ++r) {
    const bool contained = (r > 0 && within(sets[r], sets[r - 1])) || (r + 1 < sets.size() && within(sets[r], sets[r + 1]));
    if (!contained && seen.insert(sets[r]).second) kept.push_back(sets[r]);
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
    total = cost_add(total, c);  // saturates: many costs below 10^18 may sum past int64
  }
  for (const auto& edge : p.edges) {
    const int64_t c = edge_cost(p, edge, a);
    if (c >= kForbidden) return kForbidden;
    total = cost_add(total, c);
  }
  // One sweep over the interval ends (within_usage_limit), not a pass over
  // every node per time step.
  if (p.usage_limit && !within_usage_limit(p, a)) return kForbidden;
  return total;
}

}  // namespace shardsynth::synth
