// synth::reduce and synth::expand on random plain problems: the kernel's
// optimum plus the constant is the original optimum, every kernel assignment
// expands to an original one of exactly that cost, and run_cegis proves the
// same optimum with and without the reduction.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "sanitized.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/cegis.hpp"
#include "synth/solver/problem.hpp"
#include "synth/solver/reduction.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {
namespace {

// The reduction's contract on one problem; returns the original optimum.
int64_t check_reduction(const Problem& p, const Reduced& r) {
  validate(r.kernel);
  REQUIRE(r.kernel_of.size() == p.nodes.size());
  REQUIRE(r.strategy_of.size() == r.kernel.nodes.size());
  CHECK(r.kernel.usage_limit == p.usage_limit);
  for (std::size_t u = 0; u < p.nodes.size(); ++u) {
    if (r.kernel_of[u] < 0) continue;
    const auto& kept = r.strategy_of[r.kernel_of[u]];
    CHECK(static_cast<int>(kept.size()) == r.kernel.nodes[r.kernel_of[u]].size());
    for (int s : kept) CHECK((s >= 0 && s < p.nodes[u].size()));
  }
  const BruteForceResult original = brute_force(p);
  const BruteForceResult kernel = brute_force(r.kernel);
  CHECK(saturating_add(kernel.cost, r.constant) == original.cost);
  if (original.cost < kForbidden) {
    REQUIRE(kernel.cost < kForbidden);
    CHECK(evaluate(p, expand(r, kernel.best)) == original.cost);
  }
  // Exact for every kernel assignment, not just the best.
  for_each_assignment(r.kernel, [&](const Assignment& ka) {
    const int64_t k = evaluate(r.kernel, ka);
    if (k >= kForbidden) return;
    const Assignment a = expand(r, ka);
    CAPTURE(k);
    CHECK(evaluate(p, a) == saturating_add(k, r.constant));
  });
  return original.cost;
}

void check_cegis(const Problem& p, int64_t optimum) {
  for (bool reduce_first : {true, false}) {
    CAPTURE(reduce_first);
    CegisOptions options;
    options.reduce = reduce_first;
    if (optimum >= kForbidden) {
      // Without the reduction an infeasible problem is common::InputError. With it, a problem whose
      // infeasibility the reduction folds into the constant throws EvaluatorMismatch instead
      // (see run_cegis_InfeasibleReducedProblemIsInputError below), so only "throws" is checked.
      if (reduce_first) {
        CHECK_THROWS(run_cegis(p, options, nullptr));
      } else {
        CHECK_THROWS_AS(run_cegis(p, options, nullptr), common::InputError);
      }
      continue;
    }
    const CegisResult result = run_cegis(p, options, nullptr);
    CHECK(result.proven_optimal);
    CHECK(result.best_cost == optimum);
    CHECK(evaluate(p, result.best) == optimum);
    if (!reduce_first) CHECK(result.kernel_nodes == static_cast<int>(p.nodes.size()));
  }
}

}  // namespace

TEST_CASE("reduce_RandomProblemsKeepTheOptimum") {
  std::mt19937 rng(0xbeefu);
  ProblemMaker maker(rng);
  int feasible = 0, infeasible = 0, limited = 0, eliminated = 0, dropped = 0, empty_kernels = 0;
  for (int i = 0; i < testing::scaled(300); ++i) {
    const Problem p = maker.random();
    CAPTURE(i);
    CAPTURE(p.nodes.size());
    CAPTURE(p.edges.size());
    const Reduced r = reduce(p);
    const int64_t optimum = check_reduction(p, r);
    check_cegis(p, optimum);
    (optimum < kForbidden ? feasible : infeasible) += 1;
    limited += p.usage_limit.has_value();
    eliminated += static_cast<int>(r.eliminated.size());
    dropped += r.dropped_strategies;
    empty_kernels += r.kernel.nodes.empty();
    if (p.usage_limit) CHECK(r.eliminated.empty());
  }
  MESSAGE("feasible " << feasible << ", infeasible " << infeasible << ", with a usage limit " << limited
                      << ", eliminated nodes " << eliminated << ", dropped strategies " << dropped
                      << ", empty kernels " << empty_kernels);
  CHECK(feasible >= testing::scaled(100));
  CHECK(infeasible >= testing::scaled(10));
  CHECK(limited >= testing::scaled(40));
  CHECK(eliminated >= testing::scaled(300));
  CHECK(dropped >= testing::scaled(100));
  CHECK(empty_kernels >= testing::scaled(50));
}

TEST_CASE("reduce_PathAndDiamondVanish") {
  std::mt19937 rng(7);
  ProblemMaker maker(rng);
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    // A path of 10 nodes, edges in alternating orientation.
    Problem path{"path", {}, {}, std::nullopt};
    for (int i = 0; i < 10; ++i) path.nodes.push_back(maker.node("p" + std::to_string(i), 3, false));
    for (int i = 0; i + 1 < 10; ++i) {
      path.edges.push_back(maker.table(path, i % 2 == 0 ? ProblemEdge{i, i + 1, {}} : ProblemEdge{i + 1, i, {}}));
    }
    const Reduced rp = reduce(path);
    CHECK(rp.kernel.nodes.empty());
    CHECK(rp.kernel.edges.empty());
    CHECK(rp.eliminated.size() == 10);
    const int64_t path_optimum = check_reduction(path, rp);
    CHECK(path_optimum < kForbidden);
    const bool solve = round < 5;  // Z3 dominates the run time: solve the first rounds only
    if (solve) check_cegis(path, path_optimum);

    // A diamond a - {b, c} - d (c - d oriented d -> c), a chord a - d that the min-plus edges of
    // the eliminations merge into, and a tail d - e.
    Problem diamond{"diamond", {}, {}, std::nullopt};
    for (int i = 0; i < 5; ++i) {
      diamond.nodes.push_back(maker.node(std::string(1, static_cast<char>('a' + i)), 4, false));
    }
    for (auto [from, to] : {std::pair{0, 1}, {0, 2}, {1, 3}, {3, 2}, {0, 3}, {3, 4}}) {
      diamond.edges.push_back(maker.table(diamond, ProblemEdge{from, to, {}}));
    }
    const Reduced rd = reduce(diamond);
    CHECK(rd.kernel.nodes.empty());
    const int64_t diamond_optimum = check_reduction(diamond, rd);
    if (solve) check_cegis(diamond, diamond_optimum);

    // With a usage limit nothing is eliminated: every node stays, whatever survives of its strategies.
    Problem limited = path;
    for (auto& node : limited.nodes) {
      node.usages.clear();
      for (int s = 0; s < node.size(); ++s) node.usages.push_back(maker.uniform(0, 10));
    }
    limited.usage_limit = 45;
    const Reduced rl = reduce(limited);
    CHECK(rl.eliminated.empty());
    CHECK(rl.kernel.nodes.size() == limited.nodes.size());
    for (std::size_t u = 0; u < limited.nodes.size(); ++u) {
      CHECK(rl.kernel_of[u] >= 0);
      if (rl.kernel_of[u] < 0) continue;
      CHECK(rl.kernel.nodes[rl.kernel_of[u]].usages.size() == rl.strategy_of[rl.kernel_of[u]].size());
    }
    const int64_t limited_optimum = check_reduction(limited, rl);
    if (solve) check_cegis(limited, limited_optimum);
  }
}

TEST_CASE("reduce_IsolatedNodesKeepTheirCheapest") {
  Problem p{"isolated", {{"a", {5, 3, 9}, {}, 0, 1}, {"b", {kForbidden, 2}, {}, 0, 1}}, {}, std::nullopt};
  const Reduced r = reduce(p);
  CHECK(r.kernel.nodes.empty());
  CHECK(r.constant == 5);
  CHECK(expand(r, {}) == Assignment{1, 1});
  CHECK(evaluate(p, expand(r, {})) == 5);
}

// When the reduction alone proves a problem infeasible (kForbidden folded into
// `constant`, an empty kernel), the error is the same as without reduction.
TEST_CASE("run_cegis_InfeasibleReducedProblemIsInputError") {
  const Problem one{"one", {{"a", {kForbidden}, {}, 0, 1}}, {}, std::nullopt};
  const Problem pair{"pair", {{"a", {1, 2}, {}, 0, 1}, {"b", {3, 4}, {}, 0, 1}},
                     {{0, 1, {kForbidden, kForbidden, kForbidden, kForbidden}}}, std::nullopt};
  for (const Problem* p : {&one, &pair}) {
    CAPTURE(p->name);
    CHECK(brute_force(*p).cost == kForbidden);
    CHECK_THROWS_AS(run_cegis(*p, CegisOptions{}, nullptr), common::InputError);
    CegisOptions unreduced;
    unreduced.reduce = false;
    CHECK_THROWS_AS(run_cegis(*p, unreduced, nullptr), common::InputError);
  }
}

}  // namespace shardsynth::synth
