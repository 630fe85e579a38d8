// The LP relaxation by pricing pairs (lp_pricing.hpp) against the whole LP
// and exhaustive search on random small problems: every round's bound holds
// for the whole problem, a finished pricing reaches the whole LP's bound,
// and its reduced costs (over every pair, priced or not) license fixing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include "synth/solver/brute_force.hpp"
#include "synth/solver/lp_pricing.hpp"
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/reduced_cost_fixing.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {

TEST_CASE("solve_lp_by_pricing_ReachesTheWholeLpAndBoundsTheOptimum") {
  std::mt19937 rng(3301u);
  ProblemMaker maker(rng);
  int solved = 0, priced_again = 0, finished = 0;
  for (int i = 0; i < 400; ++i) {
    const Problem p = maker.random();
    CAPTURE(i);
    const BruteForceResult exact = brute_force(p);
    const LpRelaxation whole = solve_lp_relaxation(p);
    if (exact.cost >= kForbidden || !whole.has_duals()) continue;
    const PricedLp priced = solve_lp_by_pricing(p);
    if (!priced.lp.has_duals()) continue;
    ++solved;
    priced_again += priced.rounds > 1;
    CHECK(priced.lp.bound <= exact.cost);
    CHECK(priced.best_bound <= exact.cost);
    CHECK(priced.best_bound <= whole.bound + 1);
    if (priced.lp.outcome == "optimal") {
      ++finished;
      CHECK(std::llabs(priced.lp.bound - whole.bound) <= 1);
    }
    // The first LP alone: its pairs are a part of the table, its bound still holds.
    PricingOptions one;
    one.max_rounds = 1;
    const PricedLp first = solve_lp_by_pricing(p, one);
    CHECK(first.best_bound <= exact.cost);
    // Fixing with its reduced costs keeps every assignment cheaper than the incumbent.
    const int64_t incumbent = exact.cost + static_cast<int64_t>(maker.uniform(0, 3));
    Problem q = p;
    fix_by_reduced_cost(q, first.lp, incumbent);
    for_each_assignment(p, [&](const Assignment& a) {
      const int64_t cost = evaluate(p, a);
      if (cost < incumbent) CHECK(evaluate(q, a) == cost);
    });
  }
  MESSAGE(solved << " solved, " << priced_again << " priced more than once, " << finished << " finished");
  CHECK(solved >= 200);
  CHECK(priced_again >= 20);
  CHECK(finished >= solved - 5);
}

}  // namespace shardsynth::synth
