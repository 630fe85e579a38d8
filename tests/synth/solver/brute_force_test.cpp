// Cross-check: the CEGIS loop against exhaustive search on random small problems.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/cegis.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {
namespace {

// 2..7 nodes with 1..4 strategies, random edges (some parallel), costs 0..50
// with about 10% forbidden entries.
Problem random_problem(std::mt19937& rng, int index) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto cost = [&]() -> int64_t { return uniform(0, 9) == 0 ? kForbidden : uniform(0, 50); };
  Problem p;
  p.name = "random" + std::to_string(index);
  const int n = uniform(2, 7);
  for (int i = 0; i < n; ++i) {
    ProblemNode node;
    node.label = "n" + std::to_string(i);
    const int k = uniform(1, 4);
    for (int s = 0; s < k; ++s) node.costs.push_back(cost());
    p.nodes.push_back(std::move(node));
  }
  const int num_edges = uniform(0, 2 * n);
  for (int e = 0; e < num_edges; ++e) {
    ProblemEdge edge;
    edge.from = uniform(0, n - 1);
    edge.to = uniform(0, n - 2);
    if (edge.to >= edge.from) ++edge.to;  // no self loops
    const int cells = p.nodes[edge.from].size() * p.nodes[edge.to].size();
    for (int c = 0; c < cells; ++c) edge.costs.push_back(cost());
    p.edges.push_back(edge);
    if (uniform(0, 4) == 0) {  // a parallel edge with its own table
      for (auto& c : edge.costs) c = cost();
      p.edges.push_back(std::move(edge));
    }
  }
  return p;
}

int64_t space_size(const Problem& p) {
  int64_t n = 1;
  for (const auto& node : p.nodes) n *= node.size();
  return n;
}

}  // namespace

TEST_CASE("brute_force_SmallProblem") {
  Problem p;
  p.nodes = {{"a", {3, 1}, {}, 0, 0}, {"b", {0, 2, kForbidden}, {}, 0, 0}};
  p.edges = {{0, 1, {0, 5, 1, 4, 0, 0}}};
  // a=0,b=0: 3; a=0,b=1: 10; a=1,b=0: 5; a=1,b=1: 3; b=2 forbidden.
  const BruteForceResult r = brute_force(p);
  CHECK(r.cost == 3);
  CHECK(r.best == Assignment{0, 0});  // first cheapest in odometer order (node 0 fastest)
  CHECK(r.visited == 6);
}

TEST_CASE("brute_force_NothingFeasible") {
  Problem p;
  p.nodes = {{"a", {kForbidden, 1}, {}, 0, 0}, {"b", {0}, {}, 0, 0}};
  p.edges = {{0, 1, {0, kForbidden}}};
  const BruteForceResult r = brute_force(p);
  CHECK(r.cost == kForbidden);
  CHECK(r.best.empty());
  CHECK(r.visited == 2);
  CHECK_THROWS_AS(run_cegis(p, CegisOptions{}, nullptr), common::InputError);
}

TEST_CASE("brute_force_LimitThrows") {
  Problem p;
  for (int i = 0; i < 5; ++i) p.nodes.push_back({"n" + std::to_string(i), {1, 2, 3, 4}, {}, 0, 0});
  CHECK_THROWS_AS(brute_force(p, 1000), std::invalid_argument);  // 4^5 = 1024 > 1000
  const BruteForceResult r = brute_force(p, 1024);
  CHECK(r.visited == 1024);
  CHECK(r.cost == 5);
}

TEST_CASE("run_cegis_MatchesBruteForceOnRandomProblems") {
  // The PR's loop itself: no decoded incumbent, so Z3 finds every step.
  CegisOptions pr_loop;
  pr_loop.dual_bound = false;
  pr_loop.strategy = SearchStrategy::descent;
  std::mt19937 rng(20240611u);
  int feasible = 0, infeasible = 0, multi_step = 0;
  for (int i = 0; i < 200; ++i) {
    const Problem p = random_problem(rng, i);
    CAPTURE(i);
    CAPTURE(p.nodes.size());
    CAPTURE(p.edges.size());
    const BruteForceResult oracle = brute_force(p);
    CHECK(oracle.visited == space_size(p));

    int64_t last = kForbidden;
    int sat_count = 0;
    bool saw_unsat = false;
    auto on_iteration = [&](const Iteration& it) {
      CHECK_FALSE(saw_unsat);  // unsat ends the loop
      if (it.status == CheckStatus::sat) {
        CHECK(it.cost < last);  // every sat model is strictly cheaper than the one before
        CHECK(evaluate(p, it.assignment) == it.cost);
        if (sat_count > 0) {
          REQUIRE(it.bound.has_value());
          CHECK(*it.bound == last);
        } else {
          CHECK_FALSE(it.bound.has_value());
        }
        last = it.cost;
        ++sat_count;
      } else {
        CHECK(it.status == CheckStatus::unsat);
        saw_unsat = true;
      }
    };

    if (oracle.cost >= kForbidden) {
      ++infeasible;
      CHECK_THROWS_AS(run_cegis(p, pr_loop, on_iteration), common::InputError);
      CHECK(sat_count == 0);
      continue;
    }
    ++feasible;
    const CegisResult r = run_cegis(p, pr_loop, on_iteration);
    CHECK(r.proven_optimal);
    CHECK(r.stop_reason == "unsat");
    CHECK(r.best_cost == oracle.cost);
    CHECK(evaluate(p, r.best) == r.best_cost);
    CHECK(r.best.size() == p.nodes.size());
    CHECK(saw_unsat);
    CHECK(r.iterations.size() == static_cast<std::size_t>(sat_count) + 1);
    for (std::size_t k = 0; k < r.iterations.size(); ++k) CHECK(r.iterations[k].index == static_cast<int>(k));
    if (sat_count > 1) ++multi_step;
  }
  MESSAGE("feasible " << feasible << ", infeasible " << infeasible << ", improved at least once " << multi_step);
  CHECK(feasible >= 100);
  CHECK(infeasible >= 1);
  CHECK(multi_step >= 1);
}

TEST_CASE("run_cegis_IterationLimit") {
  CegisOptions pr_loop;
  pr_loop.dual_bound = false;
  pr_loop.strategy = SearchStrategy::descent;
  std::mt19937 rng(7u);
  // Find a problem whose loop needs more than one sat step, then stop it after one.
  for (int i = 0; i < 200; ++i) {
    const Problem p = random_problem(rng, i);
    if (brute_force(p).cost >= kForbidden) continue;
    const CegisResult full = run_cegis(p, pr_loop, nullptr);
    if (full.iterations.size() < 3) continue;
    CegisOptions options = pr_loop;
    options.max_iterations = 1;
    const CegisResult cut = run_cegis(p, options, nullptr);
    CHECK_FALSE(cut.proven_optimal);
    CHECK(cut.stop_reason == "iteration limit");
    CHECK(cut.iterations.size() == 1);
    CHECK(cut.best_cost >= full.best_cost);
    CHECK(evaluate(p, cut.best) == cut.best_cost);
    return;
  }
  FAIL("no random problem needed more than one improvement");
}

}  // namespace shardsynth::synth
