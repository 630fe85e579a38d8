#include <doctest/doctest.h>

#include <array>
#include <optional>
#include <random>

#include <z3++.h>

#include "common/error.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/cegis.hpp"
#include "synth/solver/edge_classes.hpp"
#include "synth/solver/test_problems.hpp"
#include "synth/solver/z3_encoding.hpp"

using namespace shardsynth::synth;

namespace {

Problem random_problem(std::mt19937& rng, int nodes) {
  std::uniform_int_distribution<int> strategies(1, 4), cost(0, 40), percent(0, 99);
  auto value = [&] { return percent(rng) < 10 ? kForbidden : static_cast<int64_t>(cost(rng)); };
  Problem p{"random", {}, {}, std::nullopt};
  for (int i = 0; i < nodes; ++i) {
    ProblemNode n{"n" + std::to_string(i), {}, {}, 0, 0};
    for (int s = strategies(rng); s > 0; --s) n.costs.push_back(value());
    p.nodes.push_back(std::move(n));
  }
  for (int e = 0; e < nodes + 1; ++e) {
    std::uniform_int_distribution<int> pick(0, nodes - 1);
    ProblemEdge edge{pick(rng), pick(rng), {}};
    if (edge.from == edge.to) continue;
    for (int k = p.nodes[edge.from].size() * p.nodes[edge.to].size(); k > 0; --k) edge.costs.push_back(value());
    p.edges.push_back(std::move(edge));
  }
  return p;
}

// Pins every assignment of `p` and compares Z3's value of the cost term with
// the evaluator's; a forbidden assignment must be unsat. With the cost bound
// of the encoding, the pinned assignment must fit "below cost + 1" and not
// "below cost" (no model can count less than it costs). Returns how many
// assignments were compared.
int compare_every_assignment(const Problem& p, EncodingKind kind) {
  z3::context ctx;
  Z3Encoding enc(ctx, p, kind);
  z3::solver solver(ctx);
  solver.add(enc.constraints());
  int compared = 0;
  Assignment a(p.nodes.size(), 0);
  while (true) {
    z3::expr_vector pins(ctx);
    for (std::size_t i = 0; i < a.size(); ++i) pins.push_back(enc.picks(static_cast<int>(i), a[i]));
    const int64_t expected = evaluate(p, a);
    const auto answer = solver.check(pins);
    if (expected >= kForbidden) {
      CHECK(answer == z3::unsat);
    } else {
      REQUIRE(answer == z3::sat);
      CHECK(enc.cost_value(solver.get_model()) == expected);
      CHECK(solver.get_model().eval(enc.cost_term(), true).get_numeral_int64() == expected);
      CHECK(enc.decode(solver.get_model()) == a);
      pins.push_back(enc.below(expected + 1));
      CHECK(solver.check(pins) == z3::sat);
      pins.pop_back();
      pins.push_back(enc.below(expected));
      CHECK(solver.check(pins) == z3::unsat);
      ++compared;
    }
    std::size_t i = 0;
    while (i < a.size() && ++a[i] == p.nodes[i].size()) a[i++] = 0;
    if (i == a.size()) return compared;
  }
}

// Gives `p` usages, lifetimes and a limit that binds sometimes.
void add_memory(std::mt19937& rng, Problem& p) {
  std::uniform_int_distribution<int> usage(0, 9), time(0, 4);
  for (auto& node : p.nodes) {
    for (int s = 0; s < node.size(); ++s) node.usages.push_back(usage(rng));
    node.live_from = time(rng);
    node.live_to = node.live_from + time(rng);
  }
  p.usage_limit = 12;
}

}  // namespace

TEST_CASE("Z3Encoding_CostTermEqualsEvaluatorOnEveryAssignment") {
  // Not just the models the loop happens to visit: every assignment of small random problems.
  std::mt19937 rng(7);
  int compared = 0;
  for (int round = 0; round < 75; ++round) {
    Problem p = random_problem(rng, 4);
    if (round % 2 == 1) add_memory(rng, p);
    const EncodingKind kind = std::array{EncodingKind::if_chains, EncodingKind::one_hot, EncodingKind::pseudo_boolean}[round % 3];
    CAPTURE(round);
    compared += compare_every_assignment(p, kind);
  }
  CHECK(compared > 300);
}

TEST_CASE("Z3Encoding_PseudoBooleanOverTableClassesEqualsEvaluatorOnEveryAssignment") {
  // Tables whose rows and columns repeat (few classes), as a strategy's
  // choices into one neighbour often do: the class literals must give the
  // exact cost, forbidden pairs included, and with the nodes' least costs
  // large, the bound goes through the constant.
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> strategies(2, 5), cls(0, 1), cost(0, 40), percent(0, 99);
  int compared = 0, repeated = 0;
  for (int round = 0; round < 40; ++round) {
    Problem p = random_problem(rng, 4);
    for (auto& node : p.nodes) {
      node.costs.resize(strategies(rng), 0);
      for (auto& c : node.costs) c = percent(rng) < 10 ? kForbidden : 3'000'000'000LL + cost(rng);
    }
    for (auto& edge : p.edges) {
      const int rows = p.nodes[edge.from].size(), cols = p.nodes[edge.to].size();
      std::vector<int> row_of(rows), col_of(cols);
      for (int& r : row_of) r = cls(rng);
      for (int& c : col_of) c = cls(rng);
      const int64_t small[2][2] = {{cost(rng), percent(rng) < 20 ? kForbidden : cost(rng)}, {cost(rng), 0}};
      edge.costs.assign(static_cast<std::size_t>(rows) * cols, 0);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) edge.costs[static_cast<std::size_t>(r) * cols + c] = small[row_of[r]][col_of[c]];
      }
      const auto all = [](int n) { return std::vector<bool>(n, false); };
      repeated += edge_classes(p, edge, all(rows), all(cols)).row_members.size() < static_cast<std::size_t>(rows);
    }
    if (round % 2 == 1) add_memory(rng, p);
    CAPTURE(round);
    compared += compare_every_assignment(p, EncodingKind::pseudo_boolean);
  }
  CHECK(repeated > 40);
  CHECK(compared > 300);
}

TEST_CASE("run_cegis_HandBuiltChainDescendsToOptimum") {
  // a -> b -> c, two strategies each; the optimum picks (1, 1, 0).
  Problem p{"chain", {}, {}, std::nullopt};
  p.nodes = {{"a", {5, 1}, {}, 0, 0}, {"b", {0, 2}, {}, 0, 0}, {"c", {3, 3}, {}, 0, 0}};
  p.edges = {{0, 1, {0, 10, 10, 0}}, {1, 2, {0, kForbidden, 0, 4}}};
  std::vector<Iteration> seen;
  const CegisResult r = run_cegis(p, {}, [&](const Iteration& it) { seen.push_back(it); });
  CHECK(r.proven_optimal);
  CHECK(r.best_cost == 6);
  CHECK(r.best == Assignment{1, 1, 0});
  CHECK(r.stop_reason == "unsat");
  REQUIRE(seen.size() == r.iterations.size());
  CHECK(seen.back().status == CheckStatus::unsat);
  CHECK(seen.back().bound == 6);
  CHECK(!seen.front().bound.has_value());
  CHECK(brute_force(p).cost == 6);
}

TEST_CASE("run_cegis_IterationLimitIsNotAProof") {
  Problem p{"two", {}, {}, std::nullopt};
  p.nodes = {{"a", {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, {}, 0, 0}};
  const CegisResult r = run_cegis(p, CegisOptions{.max_iterations = 1}, nullptr);
  CHECK_FALSE(r.proven_optimal);
  CHECK(r.stop_reason == "iteration limit");
  CHECK(r.iterations.size() == 1);
}

TEST_CASE("run_cegis_InfeasibleProblemIsAnInputError") {
  Problem p{"nothing", {}, {}, std::nullopt};
  p.nodes = {{"a", {kForbidden, kForbidden}, {}, 0, 0}};
  CHECK_THROWS_WITH_AS(run_cegis(p, {}, nullptr), doctest::Contains("no feasible assignment"),
                       shardsynth::common::InputError);
}

TEST_CASE("run_cegis_BisectProvesTheSameOptimumAsDescent") {
  std::mt19937 rng(11);
  int proven = 0;
  for (int round = 0; round < 60; ++round) {
    const Problem p = random_problem(rng, 5);
    const BruteForceResult truth = brute_force(p);
    if (truth.cost >= kForbidden) continue;
    for (bool reduce : {false, true}) {
      std::optional<int64_t> previous_best;
      int64_t previous_lower = 0;
      const CegisResult r = run_cegis(p, CegisOptions{.strategy = SearchStrategy::bisect, .reduce = reduce},
                                      [&](const Iteration& it) {
                                        if (it.status == CheckStatus::sat) {
                                          CHECK((!previous_best || it.cost < *previous_best));
                                          previous_best = it.cost;
                                        } else if (it.bound) {
                                          CHECK(*it.bound >= previous_lower);  // the proven bound only rises
                                          previous_lower = *it.bound;
                                        }
                                      });
      CHECK(r.proven_optimal);
      CHECK(r.best_cost == truth.cost);
      CHECK(r.lower_bound == truth.cost);
      ++proven;
    }
  }
  CHECK(proven > 40);
}

TEST_CASE("run_cegis_StartPlansAreStepsAndTheFirstIncumbent") {
  // Where the anytime search runs, the start plans come first in the trace,
  // each cheaper than the one before (a forbidden or costlier start is no
  // step), and the loop still proves the brute-force optimum from there.
  // Where the exact loop alone decides, they are not asked for.
  std::mt19937 rng(37);
  int with_steps = 0;
  for (int round = 0; round < 80; ++round) {
    const Problem p = random_problem(rng, 5);
    const BruteForceResult truth = brute_force(p);
    if (truth.cost >= kForbidden) continue;
    CAPTURE(round);
    std::vector<StartPlan> starts;
    for_each_assignment(p, [&](const Assignment& x) {
      if (starts.size() < 6) starts.push_back({x, "start " + std::to_string(starts.size()), 0.5});
    });
    std::vector<int64_t> scored;
    for (const auto& s : starts) {
      const int64_t c = evaluate(p, s.assignment);
      if (c < kForbidden && (scored.empty() || c < scored.back())) scored.push_back(c);
    }
    const bool anytime = round % 2 == 0;
    CegisOptions options;
    int asked = 0;
    options.starts = [&](std::optional<std::chrono::steady_clock::time_point> deadline) {
      ++asked;
      CHECK_FALSE(deadline);
      return starts;
    };
    options.anytime = anytime ? AnytimeMode::always : AnytimeMode::never;
    const CegisResult r = run_cegis(p, options, nullptr);
    CHECK(r.proven_optimal);
    CHECK(r.best_cost == truth.cost);
    CHECK(asked == (anytime ? 1 : 0));
    if (!anytime) scored.clear();
    REQUIRE(r.iterations.size() >= scored.size());
    for (std::size_t k = 0; k < scored.size(); ++k) {
      CHECK(r.iterations[k].source.rfind("start ", 0) == 0);
      CHECK(r.iterations[k].cost == scored[k]);
      CHECK(r.iterations[k].status == CheckStatus::sat);
      CHECK(r.iterations[k].solver_ms == 0.5);
    }
    for (std::size_t k = scored.size(); k < r.iterations.size(); ++k) {
      CHECK(r.iterations[k].source.rfind("start ", 0) != 0);
      if (r.iterations[k].status == CheckStatus::sat && !scored.empty()) CHECK(r.iterations[k].cost < scored.back());
    }
    with_steps += !scored.empty();
  }
  CHECK(with_steps >= 20);
  Problem p{"one", {}, {}, std::nullopt};
  p.nodes = {{"a", {1, 2}, {}, 0, 0}};
  CegisOptions bad;
  bad.anytime = AnytimeMode::always;
  bad.starts = [](auto) { return std::vector<StartPlan>{{Assignment{0, 0}, "too long", 0}}; };
  CHECK_THROWS_WITH_AS(run_cegis(p, bad, nullptr), doctest::Contains("start plan 'too long' has 2 strategies"),
                       std::invalid_argument);
}
