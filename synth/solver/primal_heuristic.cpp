#include "synth/solver/primal_heuristic.hpp"

#include <algorithm>

namespace shardsynth::synth {
namespace {

// Cost in `p` of node u taking strategy a, given the strategies in `x` of
// the neighbours marked in `known`.
int64_t local_cost(const Problem& p, const std::vector<Incidence>& incidences, const Assignment& x,
                   const std::vector<bool>& known, int u, int a) {
  int64_t c = p.nodes[u].costs[a];
  for (const auto& i : incidences) {
    if (!known[i.other]) continue;
    const auto& e = p.edges[i.edge];
    const std::size_t cols = p.nodes[e.to].costs.size();
    c = cost_add(c, i.is_from ? e.costs[a * cols + x[i.other]] : e.costs[x[i.other] * cols + a]);
  }
  return c;
}

int64_t usage(const ProblemNode& node, int s) { return node.usages.empty() ? 0 : node.usages[s]; }

int64_t least_usage(const ProblemNode& node) {
  return node.usages.empty() ? 0 : *std::min_element(node.usages.begin(), node.usages.end());
}

}  // namespace

PrimalHeuristic::PrimalHeuristic(const Problem& problem)
    : problem_(problem), incidences_(incidence_lists(problem)), node_rows_(problem.nodes.size()) {
  if (!problem.usage_limit) return;
  rows_ = usage_rows(problem);
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (int u : rows_[r]) node_rows_[u].push_back(static_cast<int>(r));
  }
}

Assignment PrimalHeuristic::greedy(const Problem& costs, const std::vector<int>& order) const {
  const Problem& p = problem_;
  Assignment x(p.nodes.size(), 0);
  std::vector<bool> known(p.nodes.size(), false);
  // Per row: usage of the picked nodes plus the least usage of the others.
  std::vector<int64_t> room(rows_.size(), 0);
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (int u : rows_[r]) room[r] += least_usage(p.nodes[u]);
  }
  for (int u : order) {
    const int64_t floor = least_usage(p.nodes[u]);
    int best = -1;
    int64_t best_cost = kForbidden + 1;
    for (int pass = 0; pass < 2 && best < 0; ++pass) {
      for (int a = 0; a < p.nodes[u].size(); ++a) {
        bool fits = true;
        for (int r : node_rows_[u]) fits = fits && room[r] - floor + usage(p.nodes[u], a) <= *p.usage_limit;
        if (!fits && pass == 0) continue;  // the second pass takes any strategy: the limit cannot be kept
        const int64_t c = local_cost(costs, incidences_[u], x, known, u, a);
        if (c < best_cost) best_cost = c, best = a;
      }
    }
    x[u] = best;
    known[u] = true;
    for (int r : node_rows_[u]) room[r] += usage(p.nodes[u], best) - floor;
  }
  return x;
}

int64_t PrimalHeuristic::local_search(Assignment& x) const {
  const Problem& p = problem_;
  const std::vector<bool> known(p.nodes.size(), true);
  std::vector<int64_t> used(rows_.size(), 0);
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (int u : rows_[r]) used[r] += usage(p.nodes[u], x[u]);
  }
  auto fits = [&](int u, int a) {
    for (int r : node_rows_[u]) {
      const int64_t after = used[r] - usage(p.nodes[u], x[u]) + usage(p.nodes[u], a);
      // A move may not break the limit, nor worsen a row already over it.
      if (after > *p.usage_limit && after > used[r]) return false;
    }
    return true;
  };
  for (bool improved = true; improved;) {
    improved = false;
    for (int u = 0; u < static_cast<int>(p.nodes.size()); ++u) {
      int best = x[u];
      int64_t best_cost = local_cost(p, incidences_[u], x, known, u, x[u]);
      for (int a = 0; a < p.nodes[u].size(); ++a) {
        if (a == x[u]) continue;
        const int64_t c = local_cost(p, incidences_[u], x, known, u, a);
        if (c < best_cost && fits(u, a)) best_cost = c, best = a;
      }
      if (best == x[u]) continue;
      for (int r : node_rows_[u]) used[r] += usage(p.nodes[u], best) - usage(p.nodes[u], x[u]);
      x[u] = best;
      improved = true;
    }
  }
  return cost_without_usage(p, x);
}

}  // namespace shardsynth::synth
