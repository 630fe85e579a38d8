// The LP relaxation (Clp), reduced-cost fixing and LP rounding against
// exhaustive search on random small problems: the LP bound never passes the
// optimum, fixing keeps every assignment cheaper than the incumbent, and a
// rounded plan is scored at its true cost.
#include <doctest/doctest.h>

#include <random>

#include "synth/solver/brute_force.hpp"
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/lp_rounding.hpp"
#include "synth/solver/lp_tightening.hpp"
#include "synth/solver/reduced_cost_fixing.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {
namespace {

// A chain of `n` nodes, each with a usage per strategy, all live together,
// where the cheapest strategies use the most memory: the limit binds.
Problem memory_chain(int n) {
  Problem p{"chain", {}, {}, std::nullopt};
  for (int v = 0; v < n; ++v) {
    p.nodes.push_back({"n" + std::to_string(v), {1, 4, 9}, {30, 20, 10}, 0, 10});
  }
  for (int v = 0; v + 1 < n; ++v) p.edges.push_back({v, v + 1, {0, 3, 5, 3, 0, 3, 5, 3, 0}});
  p.usage_limit = 20 * n;
  return p;
}

}  // namespace

TEST_CASE("solve_lp_relaxation_BoundsTheOptimumAndIsExactOnAChainWithoutALimit") {
  Problem p = memory_chain(6);
  const int64_t optimum = brute_force(p).cost;
  const LpRelaxation lp = solve_lp_relaxation(p);
  CHECK(lp.outcome == "optimal");
  CHECK(lp.memory_rows == 1);
  CHECK(lp.bound > 6);  // above the bound without the memory row (all cheapest, 6)
  CHECK(lp.bound <= optimum);
  p.usage_limit.reset();
  const LpRelaxation free = solve_lp_relaxation(p);
  CHECK(free.outcome == "optimal");
  CHECK(free.memory_rows == 0);
  CHECK(free.bound == brute_force(p).cost);  // a tree: the local polytope is integral
}

TEST_CASE("solve_lp_relaxation_SaysTooLargeBeyondItsColumnLimit") {
  LpOptions options;
  options.max_columns = 5;
  const LpRelaxation lp = solve_lp_relaxation(memory_chain(4), options);
  CHECK(lp.outcome == "too large");
  CHECK(lp.bound == 0);
  CHECK_FALSE(lp.has_duals());
}

TEST_CASE("lp_KeepsEveryCheaperAssignmentOnRandomProblems") {
  std::mt19937 rng(303u);
  ProblemMaker maker(rng);
  int solved = 0, fixed = 0, rounded = 0;
  for (int i = 0; i < 400; ++i) {
    const Problem p = maker.random();
    CAPTURE(i);
    const BruteForceResult exact = brute_force(p);
    const LpRelaxation lp = solve_lp_relaxation(p);
    if (exact.cost >= kForbidden || !lp.has_duals()) continue;
    ++solved;
    CHECK(lp.bound <= exact.cost);
    const Assignment plan = round_lp(p, lp);
    if (!plan.empty()) {
      ++rounded;
      CHECK(evaluate(p, plan) >= exact.cost);
      CHECK(evaluate(p, plan) < kForbidden);
    }
    // Fixing at an incumbent just above the optimum keeps the optimum and
    // every assignment cheaper than the incumbent, at its cost.
    const int64_t incumbent = exact.cost + static_cast<int64_t>(maker.uniform(0, 3));
    Problem q = p;
    const FixingCount count = fix_by_reduced_cost(q, lp, incumbent);
    fixed += count.strategies > 0 || count.pairs > 0;
    for_each_assignment(p, [&](const Assignment& a) {
      const int64_t cost = evaluate(p, a);
      if (cost < incumbent) CHECK(evaluate(q, a) == cost);
    });
  }
  MESSAGE(solved << " solved, " << fixed << " with something fixed, " << rounded << " rounded to a feasible plan");
  CHECK(solved >= 200);
  CHECK(fixed >= 50);
  CHECK(rounded >= 100);
}

TEST_CASE("tighten_with_lp_FixesAtTheRoundedPlanAndReportsItsCost") {
  const Problem original = memory_chain(8);
  const int64_t optimum = brute_force(original).cost;
  Problem p = original;
  LpTightening step = tighten_with_lp(p, std::nullopt, std::nullopt);
  CHECK(step.outcome == "optimal");
  REQUIRE_FALSE(step.plan.empty());
  CHECK(step.plan_cost == evaluate(original, step.plan));
  CHECK(step.plan_cost >= optimum);
  CHECK(step.cutoff == step.plan_cost);
  CHECK(step.bound <= optimum);
  REQUIRE(step.relaxation);
  // The fixed problem keeps every assignment cheaper than the cutoff, at its cost.
  int kept = 0;
  for_each_assignment(original, [&](const Assignment& a) {
    const int64_t cost = evaluate(original, a);
    if (cost >= step.cutoff) return;
    ++kept;
    CHECK(evaluate(p, a) == cost);
  });
  MESSAGE("fixed " << step.fixed.strategies << " strategies and " << step.fixed.pairs << " pairs; "
                   << kept << " assignments cheaper than the cutoff " << step.cutoff << ", optimum " << optimum);
}

}  // namespace shardsynth::synth
