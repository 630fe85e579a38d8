// The Pareto elimination and the search that drives it, against exhaustive
// search on random small problems with usage limits: with every memory row
// tracked it finds the optimum (or proves there is none below the cutoff),
// with and without the LP's pruning; the driver, which starts from one row
// and rounds usages, proves the same optimum.
#include <doctest/doctest.h>

#include <chrono>
#include <random>

#include "synth/solver/brute_force.hpp"
#include "synth/solver/elimination_search.hpp"
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/pareto_elimination.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {
namespace {

// A random problem with a usage limit (ProblemMaker's limited kind).
Problem limited_problem(ProblemMaker& maker) {
  for (;;) {
    Problem p = maker.random();
    if (p.usage_limit) return p;
  }
}

// The same problem at the scale of bytes: usages times 2^16 plus up to 999
// more, the limit times 2^16, so the driver's rounding (1/4096 of the limit)
// drops the small parts and must refine when a plan breaks a row by them.
Problem in_bytes(Problem p, ProblemMaker& maker) {
  for (auto& node : p.nodes) {
    for (auto& u : node.usages) u = u * 65536 + maker.uniform(0, 999);
  }
  *p.usage_limit = *p.usage_limit * 65536 + maker.uniform(0, 2999);
  return p;
}

// Draws `draws` random limited problems (at the scale of bytes when
// `bytes`) and calls `check(p, exact, lp, maker)` on each that has a plan
// and whose LP has duals.
template <class Check>
void for_each_solvable(unsigned seed, bool bytes, int draws, Check check) {
  std::mt19937 rng(seed);
  ProblemMaker maker(rng);
  for (int i = 0; i < draws; ++i) {
    const Problem p = bytes ? in_bytes(limited_problem(maker), maker) : limited_problem(maker);
    CAPTURE(i);
    const BruteForceResult exact = brute_force(p);
    const LpRelaxation lp = solve_lp_relaxation(p);
    if (exact.cost >= kForbidden || !lp.has_duals()) continue;
    check(p, exact, lp, maker);
  }
}

}  // namespace

TEST_CASE("eliminate_with_labels_FindsTheOptimumWithEveryRowTracked") {
  std::mt19937 rng(4242u);
  ProblemMaker maker(rng);
  int feasible = 0;
  for (int i = 0; i < 300; ++i) {
    const Problem p = limited_problem(maker);
    CAPTURE(i);
    const BruteForceResult exact = brute_force(p);
    const LabelElimination e = eliminate_with_labels(p, usage_rows(p), nullptr, {});
    if (exact.cost >= kForbidden) {
      CHECK(e.outcome == "none");
      continue;
    }
    ++feasible;
    REQUIRE(e.outcome == "found");
    CHECK(e.cost == exact.cost);
    CHECK(evaluate(p, e.plan) == exact.cost);
    // Below the optimum there is nothing.
    EliminationOptions below;
    below.cutoff = exact.cost;
    CHECK(eliminate_with_labels(p, usage_rows(p), nullptr, below).outcome == "none");
  }
  CHECK(feasible >= 100);
}

TEST_CASE("eliminate_with_labels_KeepsTheOptimumUnderTheLpsPruning") {
  int pruned_runs = 0;
  for_each_solvable(777u, false, 300, [&](const Problem& p, const BruteForceResult& exact, const LpRelaxation& lp,
                                          ProblemMaker& maker) {
    ++pruned_runs;
    EliminationOptions options;
    options.cutoff = exact.cost + maker.uniform(0, 3);
    const LabelElimination e = eliminate_with_labels(p, usage_rows(p), &lp, options);
    if (exact.cost < options.cutoff) {
      REQUIRE(e.outcome == "found");
      CHECK(e.cost == exact.cost);
    } else {
      CHECK(e.outcome == "none");
    }
  });
  CHECK(pruned_runs >= 80);
}

TEST_CASE("close_by_elimination_ProvesTheOptimumFromOneRowWithRoundedUsages") {
  int proven = 0, refined = 0;
  for_each_solvable(9001u, true, 300, [&](const Problem& p, const BruteForceResult& exact, const LpRelaxation& lp,
                                          ProblemMaker& maker) {
    const int64_t incumbent = exact.cost + maker.uniform(0, 3);
    const EliminationSearch s = close_by_elimination(p, lp, incumbent, std::nullopt);
    REQUIRE(s.proven());
    ++proven;
    refined += s.runs > 1;
    CHECK(s.bound <= exact.cost);
    if (exact.cost < incumbent) {
      REQUIRE_FALSE(s.plan.empty());
      CHECK(s.cost == exact.cost);
      CHECK(evaluate(p, s.plan) == exact.cost);
    } else {
      CHECK(s.plan.empty());
      CHECK(s.bound == incumbent);
    }
    // Every cutoff with nothing below it is a true lower bound.
    for (const EliminationProbe& probe : s.probes) {
      if (probe.outcome == "none") CHECK(probe.cutoff <= exact.cost);
    }
  });
  MESSAGE(proven << " proven, " << refined << " needing more than one elimination");
  CHECK(proven >= 80);
  CHECK(refined >= 3);
}

TEST_CASE("close_by_elimination_ResumesWhereAnEarlierSearchGaveUp") {
  // A search whose deadline has passed gives up at once; one resumed from
  // it proves the optimum.
  int resumed = 0;
  for_each_solvable(4242u, true, 300, [&](const Problem& p, const BruteForceResult& exact, const LpRelaxation& lp,
                                          ProblemMaker& maker) {
    const int64_t incumbent = exact.cost + 1 + maker.uniform(0, 3);
    const EliminationSearch first =
        close_by_elimination(p, lp, incumbent, std::chrono::steady_clock::now() - std::chrono::seconds(1));
    REQUIRE_FALSE(first.proven());
    CHECK(first.probes.empty());
    ++resumed;
    const EliminationSearch s = close_by_elimination(p, lp, incumbent, std::nullopt, &first);
    REQUIRE(s.proven());
    CHECK(s.cost == exact.cost);
    CHECK(evaluate(p, s.plan) == exact.cost);
  });
  MESSAGE(resumed << " resumed");
  CHECK(resumed >= 20);
}

TEST_CASE("eliminate_with_labels_GivesUpPastItsLabelLimit") {
  Problem p{"chain", {}, {}, std::nullopt};
  for (int v = 0; v < 6; ++v) p.nodes.push_back({"n" + std::to_string(v), {1, 4, 9}, {30, 20, 10}, 0, 10});
  for (int v = 0; v + 1 < 6; ++v) p.edges.push_back({v, v + 1, {0, 3, 5, 3, 0, 3, 5, 3, 0}});
  p.usage_limit = 120;
  EliminationOptions options;
  options.max_labels = 3;
  CHECK(eliminate_with_labels(p, usage_rows(p), nullptr, options).outcome == "label limit");
  options.max_labels = 1'000'000;
  const LabelElimination e = eliminate_with_labels(p, usage_rows(p), nullptr, options);
  CHECK(e.outcome == "found");
  CHECK(e.cost == brute_force(p).cost);
}

}  // namespace shardsynth::synth
