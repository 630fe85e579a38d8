// Regions of the cost network (network_regions.hpp) on random small
// problems with a usage limit, against exhaustive enumeration: a region's
// network scores every plan that differs from the incumbent only inside the
// region exactly (offset + region cost) and admits exactly the plans that
// fit the whole network's rows; a region that is the whole network, searched
// without a budget, reaches the optimum from any plan that fits; and the
// plans the regions report are each cheaper than the last, at their scores.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "sanitized.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/network_inputs.hpp"
#include "synth/solver/network_regions.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {
namespace {

// The network cost of `x` on `network` (unary and edge costs; saturating).
int64_t network_cost(const Problem& network, const Assignment& x) {
  int64_t total = 0;
  for (std::size_t i = 0; i < network.nodes.size(); ++i) total = cost_add(total, network.nodes[i].costs[x[i]]);
  for (const ProblemEdge& e : network.edges) {
    total = cost_add(total, e.costs[x[e.from] * network.nodes[e.to].size() + x[e.to]]);
  }
  return total;
}

bool fits(const std::vector<KnapsackRow>& rows, const Assignment& x) {
  for (const KnapsackRow& row : rows) {
    int64_t used = 0;
    for (std::size_t m = 0; m < row.vars.size(); ++m) used += row.weights[m][x[row.vars[m]]];
    if (used > row.capacity) return false;
  }
  return true;
}

// The first plan of `input`'s network that scores below kForbidden, or empty.
Assignment first_plan_that_fits(const NetworkInput& input) {
  Assignment found;
  for_each_assignment(input.network, [&](const Assignment& x) {
    if (found.empty() && input.score(x) < kForbidden) found = x;
  });
  return found;
}

}  // namespace

TEST_CASE("network_regions_ARegionScoresItsPlansExactly") {
  std::mt19937 rng(3031);
  const auto check = [&](const Problem& p, const FoldedProblem& folded, int64_t) {
    const NetworkInput input = folded_input(p, folded, rng, false);
    const Assignment plan = first_plan_that_fits(input);
    std::vector<int> vars;
    for (int v = 0; v < static_cast<int>(plan.size()); ++v) {
      if (rng() % 2 == 0) vars.push_back(v);
    }
    if (vars.empty()) return false;
    const NetworkInput region = region_input(input, plan, vars);
    REQUIRE(region.network.nodes.size() == vars.size());
    for_each_assignment(region.network, [&](const Assignment& part) {
      Assignment x = plan;
      for (std::size_t k = 0; k < vars.size(); ++k) x[vars[k]] = part[k];
      const int64_t score = input.score(x);
      CHECK(region.score(part) == score);
      CHECK(fits(region.rows, part) == fits(input.rows, x));
      if (score < kForbidden) CHECK(score == cost_add(region.offset, network_cost(region.network, part)));
    });
    return true;
  };
  CHECK(for_each_limited_problem(rng, testing::scaled(600), /*mixed=*/false, check) > testing::scaled(100));
}

TEST_CASE("network_regions_TheWholeNetworkAsARegionReachesTheOptimum") {
  std::mt19937 rng(3032);
  const auto check = [&](const Problem& p, const FoldedProblem& folded, int64_t optimum) {
    const NetworkInput input = folded_input(p, folded, rng, false);
    if (input.network.nodes.empty()) return false;  // folded away entirely
    const Assignment plan = first_plan_that_fits(input);
    REQUIRE(!plan.empty());
    NetworkRegionOptions whole;
    whole.first_size = whole.max_size = static_cast<int>(plan.size());
    whole.work_per_region = 0;  // no budget: the search closes
    whole.max_regions = 1;
    const NetworkRegionRun run = search_network_regions(input, input.score(plan), plan, whole);
    CHECK(run.regions == 1);
    CHECK(run.closed == 1);
    const int64_t reached = run.plans.empty() ? input.score(plan) : run.plans.back().second;
    CHECK(reached == optimum);
    return true;
  };
  CHECK(for_each_limited_problem(rng, testing::scaled(600), /*mixed=*/true, check) > testing::scaled(100));
}

TEST_CASE("network_regions_SmallRegionsReportFallingPlansAtTheirScores") {
  std::mt19937 rng(3033);
  uint64_t seed = 0;
  const auto check = [&](const Problem& p, const FoldedProblem& folded, int64_t) {
    const NetworkInput input = folded_input(p, folded, rng, false);
    const Assignment plan = first_plan_that_fits(input);
    if (plan.empty()) return false;  // folded away entirely
    NetworkRegionOptions small;
    small.seed = ++seed;
    small.first_size = 2;
    small.max_regions = 12;
    small.work_per_region = 200;
    const NetworkRegionRun run = search_network_regions(input, input.score(plan), plan, small);
    CHECK(run.regions == 12);
    int64_t last = input.score(plan);
    for (const auto& [x, cost] : run.plans) {
      CHECK(cost < last);
      CHECK(input.score(x) == cost);
      last = cost;
    }
    return true;
  };
  CHECK(for_each_limited_problem(rng, testing::scaled(400), /*mixed=*/false, check) > testing::scaled(50));
}

}  // namespace shardsynth::synth
