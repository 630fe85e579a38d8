// What follows the anytime search (after_anytime in anytime_phase.hpp):
// the exact loop within the proof's reach, the cost network's search
// beyond it where the problem folds small, its regions alone where it
// folds larger, nothing on the rest; and the
// network step after the anytime search end to end, on a chain whose
// optimum dynamic programming gives.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "synth/solver/anytime_network.hpp"
#include "synth/solver/anytime_phase.hpp"
#include "synth/solver/cegis.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/network_input.hpp"

namespace shardsynth::synth {

namespace {

// A chain of `n` nodes, the first `free` of them with three strategies
// (random costs and usages, full random tables between neighbours: nothing
// folds away), the others with one (folding fixes them).
Problem unfoldable_chain(std::mt19937& rng, int n, int free) {
  std::uniform_int_distribution<int64_t> cost(0, 1000), usage(1, 100);
  Problem p{"chain", {}, {}, std::nullopt};
  int64_t least = 0;
  for (int i = 0; i < n; ++i) {
    ProblemNode node{"n" + std::to_string(i), {}, {}, i, i + 3};
    for (int s = 0; s < (i < free ? 3 : 1); ++s) {
      node.costs.push_back(cost(rng));
      node.usages.push_back(usage(rng));
    }
    least += *std::min_element(node.usages.begin(), node.usages.end());
    p.nodes.push_back(std::move(node));
    if (i == 0) continue;
    ProblemEdge edge{i - 1, i, {}};
    for (int k = 0; k < p.nodes[i - 1].size() * p.nodes[i].size(); ++k) edge.costs.push_back(cost(rng));
    p.edges.push_back(std::move(edge));
  }
  p.usage_limit = least;  // a limit, as under which the anytime phase runs (it does not bind: three nodes are live at once)
  return p;
}

// The optimum of a chain without a binding limit, by dynamic programming.
int64_t chain_optimum(const Problem& p) {
  std::vector<int64_t> best = p.nodes[0].costs;
  for (std::size_t i = 1; i < p.nodes.size(); ++i) {
    const ProblemEdge& edge = p.edges[i - 1];
    const int rows = p.nodes[i - 1].size(), cols = p.nodes[i].size();
    std::vector<int64_t> next(cols, kForbidden);
    for (int c = 0; c < cols; ++c) {
      for (int r = 0; r < rows; ++r) {
        next[c] = std::min(next[c], best[r] + edge.costs[static_cast<std::size_t>(r) * cols + c]);
      }
      next[c] += p.nodes[i].costs[c];
    }
    best = std::move(next);
  }
  return *std::min_element(best.begin(), best.end());
}

}  // namespace

TEST_CASE("after_anytime_UnderALimitTheExactLoopOnlyWithinTheProofsReach") {
  std::mt19937 rng(5u);
  const auto later = std::chrono::steady_clock::now() + std::chrono::hours(1);
  const int beyond_reach = static_cast<int>(kNetworkFirstMaxVariables) + 200;
  const Problem small = unfoldable_chain(rng, 600, 600);
  const Problem beyond = unfoldable_chain(rng, beyond_reach, beyond_reach);
  const Problem large = unfoldable_chain(rng, kExactLoopMaxNodes + 1, kExactLoopMaxNodes + 1);
  const Problem folds_small = unfoldable_chain(rng, kExactLoopMaxNodes + 1, 300);  // as the contest's A
  REQUIRE(fold_problem(beyond).kernel.nodes.size() > kNetworkFirstMaxVariables);
  REQUIRE(fold_problem(large).kernel.nodes.size() > kNetworkMaxVariables);
  CHECK(after_anytime(small, later) == AfterAnytime::exact_loop);
  CHECK(after_anytime(small, std::nullopt) == AfterAnytime::exact_loop);
  CHECK(after_anytime(beyond, later) == AfterAnytime::network_step);
  CHECK(after_anytime(beyond, std::nullopt) == AfterAnytime::exact_loop);  // without a limit the exact loop proves in the end
  CHECK(after_anytime(large, std::nullopt) == AfterAnytime::nothing);
  CHECK(after_anytime(large, later) == AfterAnytime::regions_step);  // its rows are small: the regions alone
  const int huge_nodes = static_cast<int>(kRegionsMaxVariables) + 1;
  const Problem huge = unfoldable_chain(rng, huge_nodes, huge_nodes);
  CHECK(after_anytime(huge, later) == AfterAnytime::nothing);
  REQUIRE(fold_problem(folds_small).kernel.nodes.size() <= kNetworkMaxVariables);
  CHECK(after_anytime(folds_small, later) == AfterAnytime::network_step);
  CHECK(after_anytime(folds_small, std::nullopt) == AfterAnytime::nothing);
  Problem no_limit = beyond;
  no_limit.usage_limit.reset();
  CHECK(after_anytime(no_limit, later) == AfterAnytime::nothing);
}

// Above the exact loop's size, on a problem that folds small: the network
// step after the anytime search searches below its best plan, and on a
// chain (where its root alone is exact) it closes: the bound rises to the
// best cost, which is the optimum, without a claim of Z3's proof.
TEST_CASE("run_cegis_TheNetworkStepAfterTheAnytimeSearchClosesOnAChain") {
  std::mt19937 rng(8u);
  const Problem p = unfoldable_chain(rng, kExactLoopMaxNodes + 1, 300);
  CegisOptions options;
  options.time_limit_s = 4;
  const CegisResult r = run_cegis(p, options, nullptr);
  CHECK(r.best_cost == chain_optimum(p));
  CHECK(evaluate(p, r.best) == r.best_cost);
  CHECK(r.lower_bound == r.best_cost);
  CHECK_FALSE(r.proven_optimal);
  CHECK(r.stop_reason == "no cheaper plan: the network search closed");
  REQUIRE_FALSE(r.iterations.empty());
  CHECK(r.iterations.back().source == "network");
  CHECK(r.iterations.back().status == CheckStatus::unsat);
}

}  // namespace shardsynth::synth
