// The solver's parts against exhaustive search on random small problems
// (about a quarter with usages, liveness intervals and a usage limit):
// reparameterization, pruning at the gap, the primal heuristic, and every
// strategy, encoding and option of run_cegis.
#include <doctest/doctest.h>

#include <array>
#include <random>
#include <string>

#include "common/error.hpp"
#include "sanitized.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/cegis.hpp"
#include "synth/solver/dual_bound.hpp"
#include "synth/solver/primal_heuristic.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {
namespace {

Problem without_limit(Problem p) {
  p.usage_limit.reset();
  return p;
}

}  // namespace

TEST_CASE("reparameterize_KeepsEveryAssignmentsCostAndBoundsTheOptimum") {
  std::mt19937 rng(101u);
  ProblemMaker maker(rng);
  int problems = 0, tight = 0, decoded = 0;
  for (int i = 0; i < 1000; ++i) {
    const Problem p = maker.random();
    CAPTURE(i);
    const int64_t relaxed = brute_force(without_limit(p)).cost;
    const int64_t optimum = brute_force(p).cost;
    const DualBound d = reparameterize(p);
    ++problems;
    if (relaxed >= kForbidden) {
      // Nothing feasible: the bound may say so, and must not claim a finite optimum above it.
      CHECK(d.primal.empty());
      continue;
    }
    REQUIRE(d.constant < kForbidden);
    CHECK(d.constant <= relaxed);
    tight += d.constant == relaxed;
    for_each_assignment(p, [&](const Assignment& a) {
      CHECK(cost_without_usage(p, a) == saturating_add(d.constant, cost_without_usage(d.problem, a)));
    });
    for (const auto& node : d.problem.nodes) CHECK(*std::min_element(node.costs.begin(), node.costs.end()) == 0);
    for (const auto& edge : d.problem.edges) CHECK(*std::min_element(edge.costs.begin(), edge.costs.end()) == 0);
    if (!d.primal.empty()) {
      ++decoded;
      CHECK(evaluate(p, d.primal) == d.primal_cost);
      CHECK(d.primal_cost >= optimum);
    }
  }
  MESSAGE(problems << " problems, bound equal to the optimum on " << tight << ", decoded a feasible assignment on " << decoded);
  CHECK(tight >= 300);
  CHECK(decoded >= 300);
}

TEST_CASE("prune_at_gap_KeepsEveryCheaperAssignment") {
  std::mt19937 rng(202u);
  ProblemMaker maker(rng);
  int64_t pruned_total = 0;
  for (int i = 0; i < 1000; ++i) {
    const Problem p = maker.random();
    CAPTURE(i);
    const DualBound d = reparameterize(p);
    if (d.constant >= kForbidden) continue;
    const int64_t gap = maker.uniform(0, 40);
    int64_t pruned = 0;
    const Problem q = prune_at_gap(d.problem, gap, &pruned);
    pruned_total += pruned;
    for_each_assignment(p, [&](const Assignment& a) {
      const int64_t before = cost_without_usage(d.problem, a);
      const int64_t after = cost_without_usage(q, a);
      if (before < gap) {
        CHECK(after == before);  // everything cheaper than the gap survives, at its cost
      } else {
        CHECK((after == before || after >= kForbidden));
      }
    });
  }
  CHECK(pruned_total >= 1000);
}

TEST_CASE("PrimalHeuristic_GreedyKeepsTheUsageLimitWhenLeastUsagesFit") {
  std::mt19937 rng(303u);
  ProblemMaker maker(rng);
  int limited = 0;
  for (int i = 0; i < 1000; ++i) {
    const Problem p = maker.random();
    if (!p.usage_limit) continue;
    CAPTURE(i);
    Assignment least(p.nodes.size());
    for (std::size_t u = 0; u < p.nodes.size(); ++u) {
      const auto& usages = p.nodes[u].usages;
      least[u] = static_cast<int>(std::min_element(usages.begin(), usages.end()) - usages.begin());
    }
    if (!within_usage_limit(p, least)) continue;
    ++limited;
    const PrimalHeuristic heuristic(p);
    std::vector<int> order(p.nodes.size());
    for (std::size_t u = 0; u < order.size(); ++u) order[u] = static_cast<int>(order.size() - 1 - u);
    Assignment x = heuristic.greedy(p, order);
    CHECK(within_usage_limit(p, x));
    const int64_t before = cost_without_usage(p, x);
    CHECK(heuristic.local_search(x) <= before);
    CHECK(within_usage_limit(p, x));
  }
  CHECK(limited >= 100);
}

TEST_CASE("within_usage_limit_AgreesWithTheEvaluator") {
  std::mt19937 rng(404u);
  ProblemMaker maker(rng);
  int checked = 0;
  for (int i = 0; i < 1000; ++i) {
    const Problem p = maker.random();
    if (!p.usage_limit) continue;
    for_each_assignment(p, [&](const Assignment& a) {
      const bool fits = within_usage_limit(p, a);
      const int64_t free_cost = cost_without_usage(p, a);
      if (free_cost < kForbidden) CHECK(fits == (evaluate(p, a) < kForbidden));
      ++checked;
    });
  }
  CHECK(checked >= 10000);
}

// 1,000 problems for one strategy (a quarter under the sanitizers); encodings, probe modes and the
// reduction, bound and relaxation switches rotate through them.
static void check_strategy(SearchStrategy strategy) {
  std::mt19937 rng(505u);
  ProblemMaker maker(rng);
  const std::array encodings{EncodingKind::if_chains, EncodingKind::one_hot, EncodingKind::pseudo_boolean};
  int solved = 0, limited = 0;
  for (int i = 0; i < testing::scaled(1000); ++i) {
    const Problem p = maker.random();
    CAPTURE(i);
    const int64_t optimum = brute_force(p).cost;
    limited += p.usage_limit.has_value();
    CegisOptions options;
    options.strategy = strategy;
    options.encoding = encodings[(i + static_cast<int>(strategy)) % encodings.size()];
    options.probes = (i / 3) % 2 == 0 ? ProbeMode::assumptions : ProbeMode::push_pop;
    options.reduce = (i / 2) % 2 == 0;
    options.dual_bound = (i / 5) % 3 != 0;
    options.relax_usage = (i / 7) % 2 == 0;
    CAPTURE(options.reduce);
    CAPTURE(options.dual_bound);
    if (optimum >= kForbidden) {
      CHECK_THROWS_AS(run_cegis(p, options, nullptr), common::InputError);
      continue;
    }
    int64_t last = kForbidden;
    const CegisResult r = run_cegis(p, options, [&](const Iteration& it) {
      if (it.status != CheckStatus::sat || it.relaxed) return;
      CHECK(evaluate(p, it.assignment) == it.cost);
      CHECK(it.cost < last);  // every reported assignment improves on the one before
      last = it.cost;
    });
    CHECK(r.proven_optimal);
    CHECK(r.stop_reason == "unsat");
    CHECK(r.best_cost == optimum);
    CHECK(evaluate(p, r.best) == optimum);
    CHECK(r.lower_bound == optimum);
    ++solved;
  }
  MESSAGE("solved " << solved << ", with a usage limit " << limited);
  CHECK(limited >= testing::scaled(150));
  CHECK(solved >= testing::scaled(700));
}

TEST_CASE("run_cegis_DescentMatchesBruteForce") { check_strategy(SearchStrategy::descent); }
TEST_CASE("run_cegis_BisectMatchesBruteForce") { check_strategy(SearchStrategy::bisect); }
TEST_CASE("run_cegis_OptimizeMatchesBruteForce") { check_strategy(SearchStrategy::optimize); }

TEST_CASE("run_cegis_TimeLimitIsLabelledNotProven") {
  std::mt19937 rng(606u);
  ProblemMaker maker(rng);
  Problem p = maker.random();
  while (brute_force(p).cost >= kForbidden || p.nodes.size() < 3) p = maker.random();
  for (const auto strategy : {SearchStrategy::bisect, SearchStrategy::descent, SearchStrategy::optimize}) {
    for (const bool dual : {true, false}) {
      CAPTURE(static_cast<int>(strategy));
      CAPTURE(dual);
      CegisOptions options;
      options.strategy = strategy;
      options.dual_bound = dual;
      options.time_limit_s = 0.0;  // already out of time: no step may claim a proof
      const CegisResult r = run_cegis(p, options, nullptr);
      CHECK_FALSE(r.proven_optimal);
      CHECK(r.stop_reason == "time limit");
      if (!r.best.empty()) CHECK(r.lower_bound <= r.best_cost);
    }
  }
}

}  // namespace shardsynth::synth
