#pragma once
// Random plain problems and exhaustive enumeration, shared by the solver's
// cross-checks against brute force.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

inline int64_t saturating_add(int64_t a, int64_t b) {
  return (a >= kForbidden || b >= kForbidden) ? kForbidden : std::min(a + b, kForbidden);
}

class ProblemMaker {
 public:
  explicit ProblemMaker(std::mt19937& rng) : rng_(rng) {}

  // 1..8 nodes of 1..4 strategies, random edges (parallel ones and both orientations), ~10% forbidden
  // entries; about a quarter with usages, liveness intervals and a usage limit.
  Problem random() {
    Problem p{"random", {}, {}, std::nullopt};
    const int n = uniform(1, 8);
    const bool limited = uniform(0, 3) == 0;
    for (int i = 0; i < n; ++i) {
      ProblemNode node{"n" + std::to_string(i), {}, {}, 0, 0};
      for (int s = uniform(1, 4); s > 0; --s) {
        node.costs.push_back(value());
        if (limited) node.usages.push_back(uniform(0, 10));
      }
      if (limited) {
        node.live_from = uniform(0, 3);
        node.live_to = node.live_from + uniform(0, 3);  // sometimes empty: never live
      }
      p.nodes.push_back(std::move(node));
    }
    if (limited) p.usage_limit = uniform(0, 10 * n);
    const int edges = n == 1 ? 0 : uniform(0, 2 * n);
    for (int e = 0; e < edges; ++e) {
      ProblemEdge edge{uniform(0, n - 1), uniform(0, n - 1), {}};
      if (!p.edges.empty() && uniform(0, 4) == 0) {  // a parallel edge, either way round
        const ProblemEdge& old = p.edges[uniform(0, static_cast<int>(p.edges.size()) - 1)];
        edge.from = old.from;
        edge.to = old.to;
        if (uniform(0, 1) == 1) std::swap(edge.from, edge.to);
      }
      if (edge.from == edge.to) continue;
      p.edges.push_back(table(p, edge));
    }
    return p;
  }

  ProblemEdge table(const Problem& p, ProblemEdge edge) {
    edge.costs.clear();
    for (int k = p.nodes[edge.from].size() * p.nodes[edge.to].size(); k > 0; --k) edge.costs.push_back(value());
    return edge;
  }

  ProblemNode node(const std::string& label, int strategies, bool forbidden_ok = true) {
    ProblemNode out{label, {}, {}, 0, 1};
    for (int s = 0; s < strategies; ++s) out.costs.push_back(forbidden_ok ? value() : uniform(0, 30));
    return out;
  }

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

 private:
  int64_t value() { return uniform(0, 99) < 10 ? kForbidden : static_cast<int64_t>(uniform(0, 30)); }

  std::mt19937& rng_;
};

// Every assignment of `p`, in odometer order.
template <typename F>
void for_each_assignment(const Problem& p, F&& f) {
  Assignment a(p.nodes.size(), 0);
  while (true) {
    f(a);
    std::size_t i = 0;
    while (i < a.size() && ++a[i] == p.nodes[i].size()) a[i++] = 0;
    if (i == a.size()) return;
  }
}


// Random problems with long liveness intervals, usages on every node, some
// follower edges (one allowed entry per row), and a limit between the least
// and the largest possible peak, so that it often binds.
inline Problem binding_problem(std::mt19937& rng, int max_nodes) {
  ProblemMaker maker(rng);
  Problem p{"binding", {}, {}, std::nullopt};
  const int n = maker.uniform(1, max_nodes);
  int64_t least = 0, most = 0;
  for (int i = 0; i < n; ++i) {
    ProblemNode node{"n" + std::to_string(i), {}, {}, 0, 0};
    const int strategies = maker.uniform(1, 4);
    for (int s = 0; s < strategies; ++s) {
      node.costs.push_back(maker.uniform(0, 99) < 5 ? kForbidden : maker.uniform(0, 40));
      node.usages.push_back(maker.uniform(0, 12));
    }
    node.live_from = maker.uniform(0, 6);
    node.live_to = node.live_from + maker.uniform(0, 8);
    least += *std::min_element(node.usages.begin(), node.usages.end());
    most += *std::max_element(node.usages.begin(), node.usages.end());
    p.nodes.push_back(std::move(node));
  }
  p.usage_limit = maker.uniform(static_cast<int>(least / 2), static_cast<int>(most));
  const int edges = n == 1 ? 0 : maker.uniform(0, 2 * n);
  for (int e = 0; e < edges; ++e) {
    ProblemEdge edge{maker.uniform(0, n - 1), maker.uniform(0, n - 1), {}};
    if (edge.from == edge.to) continue;
    const int rows = p.nodes[edge.from].size(), cols = p.nodes[edge.to].size();
    const bool follower = maker.uniform(0, 2) == 0;
    for (int r = 0; r < rows; ++r) {
      const int only = maker.uniform(0, cols - 1);
      for (int c = 0; c < cols; ++c) {
        if (follower) {
          edge.costs.push_back(c == only ? maker.uniform(0, 20) : kForbidden);
        } else {
          edge.costs.push_back(maker.uniform(0, 99) < 8 ? kForbidden : maker.uniform(0, 20));
        }
      }
    }
    p.edges.push_back(std::move(edge));
  }
  return p;
}

}  // namespace shardsynth::synth
