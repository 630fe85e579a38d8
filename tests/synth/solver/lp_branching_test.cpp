// Branch and bound on the LP (lp_branching.hpp) against exhaustive search on
// random small problems with a usage limit: when it says every branch is
// closed, its incumbent is the optimum (a plan it found, when the optimum
// is cheaper than the incumbent handed in), and its bound never passes it.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "synth/solver/brute_force.hpp"
#include "synth/solver/cegis.hpp"
#include "synth/solver/lp_branching.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {

namespace {

// Calls `check(p, optimum, maker)` on each of 1,500 random problems drawn
// from `seed` that have a usage limit and a plan within it.
template <class Check>
void for_each_limited_problem(unsigned seed, Check check) {
  std::mt19937 rng(seed);
  ProblemMaker maker(rng);
  for (int i = 0; i < 1500; ++i) {
    const Problem p = maker.random();
    if (!p.usage_limit) continue;
    CAPTURE(i);
    const int64_t optimum = brute_force(p).cost;
    if (optimum < kForbidden) check(p, optimum, maker);
  }
}

// The exact loop alone (no anytime search, no elimination) on `p` with
// `mode` and Z3's resource budget per probe before the automatic branching.
CegisResult exact_loop(const Problem& p, BranchingMode mode, uint64_t rlimit) {
  CegisOptions options;
  options.anytime = AnytimeMode::never;
  options.elimination = false;
  options.network_work = 0;  // the network step would close most of these before any probe
  options.lp_branching = mode;
  options.branch_after_rlimit = rlimit;
  return run_cegis(p, options, nullptr);
}

int branch_steps(const CegisResult& r) {
  int count = 0;
  for (const Iteration& it : r.iterations) count += it.source == "branch" ? 1 : 0;
  return count;
}

}  // namespace

TEST_CASE("run_cegis_AutomaticBranchingRunsOnceAProbeSpendsItsZ3BudgetAndNeverBefore") {
  int branched = 0;
  for_each_limited_problem(3234u, [&](const Problem& p, int64_t optimum, ProblemMaker&) {
    const CegisResult spent = exact_loop(p, BranchingMode::automatic, 1);  // every non-trivial probe spends it
    const CegisResult ample = exact_loop(p, BranchingMode::automatic, 1'000'000'000);
    const CegisResult off = exact_loop(p, BranchingMode::never, 1);
    for (const CegisResult* r : {&spent, &ample, &off}) {
      CHECK(r->proven_optimal);
      CHECK(r->best_cost == optimum);
      CHECK(r->iterations.back().status == CheckStatus::unsat);
      CHECK(r->iterations.back().source == "z3");  // the proof ends in Z3's unsat
    }
    CHECK(branch_steps(ample) == 0);
    CHECK(branch_steps(off) == 0);
    if (branch_steps(spent) == 0) return;
    ++branched;
    // The branching starts right after the probe that spent the budget.
    size_t first = 0;
    while (spent.iterations[first].source != "branch") ++first;
    REQUIRE(first > 0);
    CHECK(spent.iterations[first - 1].source == "z3");
    CHECK(spent.iterations[first - 1].status == CheckStatus::unknown);
  });
  MESSAGE(branched << " branched");
  CHECK(branched >= 3);
}

TEST_CASE("branch_on_lp_ClosesAtTheOptimumOnRandomProblemsWithALimit") {
  int closed = 0, found = 0;
  for_each_limited_problem(3232u, [&](const Problem& p, int64_t optimum, ProblemMaker& maker) {
    // Handed an incumbent above the optimum half of the time, and the optimum itself otherwise.
    const int64_t incumbent = optimum + (maker.uniform(0, 1) == 0 ? 0 : maker.uniform(1, 40));
    int plans = 0;
    int64_t last = incumbent;
    const Branching b = branch_on_lp(p, incumbent, {}, [&](const Assignment& plan, int64_t cost) {
      ++plans;
      CHECK(cost < last);
      CHECK(evaluate(p, plan) == cost);
      last = cost;
    });
    CHECK(b.bound <= optimum);
    if (b.outcome != "closed") return;
    ++closed;
    CHECK(b.incumbent == optimum);
    CHECK(b.bound == optimum);
    if (optimum < incumbent) {
      ++found;
      CHECK(plans > 0);
      CHECK(evaluate(p, b.plan) == optimum);
    } else {
      CHECK(plans == 0);
    }
  });
  MESSAGE(closed << " closed, " << found << " with the optimum found by branching");
  CHECK(closed >= 150);
  CHECK(found >= 50);
}

TEST_CASE("branch_on_lp_StrongBranchingAndTheMostFractionalNodeCloseAtTheSameOptimum") {
  int compared = 0;
  for_each_limited_problem(3233u, [&](const Problem& p, int64_t optimum, ProblemMaker& maker) {
    const int64_t incumbent = optimum + maker.uniform(1, 40);
    BranchingOptions plain, strong;
    plain.strong_candidates = 1;
    strong.strong_candidates = 4;
    const Branching a = branch_on_lp(p, incumbent, plain);
    const Branching b = branch_on_lp(p, incumbent, strong);
    CHECK(b.bound <= optimum);
    if (a.outcome != "closed" || b.outcome != "closed") return;
    ++compared;
    CHECK(a.incumbent == optimum);
    CHECK(b.incumbent == optimum);
    CHECK(evaluate(p, b.plan) == optimum);
  });
  MESSAGE(compared << " closed both ways");
  CHECK(compared >= 100);
}

TEST_CASE("most_fractional_node_IsMinusOneOnAnIntegralSolutionAndTheLeastLargestValueOtherwise") {
  Problem p{"two", {}, {}, std::nullopt};
  p.nodes.push_back({"a", {0, 0}, {1, 1}, 0, 1});
  p.nodes.push_back({"b", {0, 0, 0}, {1, 1, 1}, 0, 1});
  LpRelaxation lp;
  lp.values = {{1.0, 0.0}, {0.0, 1.0, 0.0}};
  CHECK(most_fractional_node(p, lp) == -1);
  lp.values = {{0.6, 0.4}, {0.7, 0.15, 0.15}};
  CHECK(most_fractional_node(p, lp) == 0);
  p.nodes[1].costs[0] = kForbidden;  // a forbidden strategy's value does not count
  CHECK(most_fractional_node(p, lp) == 1);
}

}  // namespace shardsynth::synth
