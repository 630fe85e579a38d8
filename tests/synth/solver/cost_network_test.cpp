// The cost network's propagation (cost_network.hpp) on networks whose
// bound it must make exact: on a tree whose every variable comes after its
// parent, one directional pass moves each subtree's cheapest cost onto its
// parent, so the root's floor is the optimum (AC* alone stops below it).
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "synth/solver/brute_force.hpp"
#include "synth/solver/cost_network.hpp"
#include "sanitized.hpp"

namespace shardsynth::synth {

namespace {

// A random tree: node i > 0 hangs under an earlier node, its edge pointing
// either way; costs 0-20, about one pair in six forbidden.
Problem random_tree(std::mt19937& rng) {
  Problem p;
  const int n = 2 + static_cast<int>(rng() % 7);
  for (int i = 0; i < n; ++i) {
    ProblemNode node;
    const int size = 1 + static_cast<int>(rng() % 4);
    for (int v = 0; v < size; ++v) {
      node.costs.push_back(rng() % 21);
      node.usages.push_back(0);
    }
    p.nodes.push_back(node);
  }
  for (int i = 1; i < n; ++i) {
    const int parent = static_cast<int>(rng() % i);
    ProblemEdge e;
    e.from = rng() % 2 == 0 ? parent : i;
    e.to = e.from == parent ? i : parent;
    for (int k = 0; k < p.nodes[e.from].size() * p.nodes[e.to].size(); ++k) {
      e.costs.push_back(rng() % 6 == 0 ? kForbidden : static_cast<int64_t>(rng() % 21));
    }
    p.edges.push_back(e);
  }
  return p;
}

}  // namespace

TEST_CASE("cost_network_TheRootFloorOfATreeIsItsOptimum") {
  std::mt19937 rng(31);
  int feasible = 0;
  for (int i = 0; i < testing::scaled(3000); ++i) {
    const Problem p = random_tree(rng);
    const int64_t optimum = brute_force(p).cost;
    CAPTURE(i);
    CostNetwork net(p, {}, {}, kForbidden);
    const bool alive = net.propagate();
    CHECK(alive == (optimum < kForbidden));  // arc consistency decides a tree's hard part
    if (!alive) continue;
    ++feasible;
    CHECK(net.floor() == optimum);
  }
  CHECK(feasible > testing::scaled(1000));
}

}  // namespace shardsynth::synth
