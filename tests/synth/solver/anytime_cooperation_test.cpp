// The anytime search's searches between epochs against their definitions:
// sharing, racing, restarting a laggard and adopting the best plan stay
// deterministic and keep the rounds counted, and the restarts' rule.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <tuple>
#include <vector>

#include "synth/solver/anytime.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/lagrangian_search.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {
namespace {

// A binding problem of 150 nodes with its forbidden entries made dear
// (500) instead: at this size most would be infeasible.
Problem dear_binding_problem(std::mt19937& rng) {
  Problem p = binding_problem(rng, 150);
  for (auto& node : p.nodes) std::replace(node.costs.begin(), node.costs.end(), kForbidden, int64_t{500});
  for (auto& edge : p.edges) std::replace(edge.costs.begin(), edge.costs.end(), kForbidden, int64_t{500});
  return p;
}

// Two searches with seed `seed`, without Z3 regions or a stall stop, a
// laggard starting afresh after one epoch behind.
AnytimeOptions restarting_pair(int seed) {
  AnytimeOptions options;
  options.threads = 2;
  options.seed = static_cast<uint64_t>(seed);
  options.stall_rounds = 0;
  options.region_attempts = 0;
  options.restart_after = 1;
  return options;
}

// A step callback: each step cheaper than the one before and scored right
// on `p`; keeps the costs in `costs`.
AnytimeCallback falling_steps(const Problem& p, std::vector<int64_t>& costs) {
  return [&p, &costs](const AnytimeStep& s) {
    if (!costs.empty()) CHECK(s.cost < costs.back());
    CHECK(evaluate(p, s.assignment) == s.cost);
    costs.push_back(s.cost);
  };
}

// A step's cost, the search that found it and its round.
using Step = std::tuple<int64_t, int, long>;

// The steps of anytime_search on `p` with the searches up to `lead` epochs
// ahead of the exchange (0 = lock-step); its result in `result`.
std::vector<Step> steps_with_lead(const Problem& p, AnytimeOptions options, int lead, AnytimeResult& result) {
  std::vector<Step> steps;
  options.lead_epochs = lead;
  result = anytime_search(p, options, [&](const AnytimeStep& s) { steps.push_back({s.cost, s.search, s.round}); });
  return steps;
}

}  // namespace

TEST_CASE("anytime_search_StopsAfterMaxRoundsAndRepeatsItselfWhenSearchesShareOrRace") {
  // Two searches that adopt and relink the best plan (or three on two
  // threads, the two leaders kept after the first epoch): each stops after
  // max_rounds rounds (a last epoch cut short), and a second run repeats
  // the first step for step.
  std::mt19937 rng(47u);
  int cut = 0;
  for (int i = 0; i < 20; ++i) {
    const Problem p = binding_problem(rng, 12);
    CAPTURE(i);
    AnytimeOptions options;
    options.threads = 2;
    options.seed = static_cast<uint64_t>(i);
    options.stall_rounds = 0;
    options.region_attempts = 0;  // no proof ends it early
    options.epoch_rounds = 3;
    options.max_rounds = 7;
    options.adopt_after = 1;
    options.relink_every = 2;
    if (i % 2 == 1) {  // more searches than threads, the leaders kept after a first epoch
      options.searches = 3;
      options.keep_after = 3;
    }
    std::vector<std::pair<int64_t, long>> first, second;
    const AnytimeResult a = anytime_search(p, options, [&](const AnytimeStep& s) { first.push_back({s.cost, s.round}); });
    const AnytimeResult b = anytime_search(p, options, [&](const AnytimeStep& s) { second.push_back({s.cost, s.round}); });
    CHECK(first == second);
    CHECK(a.best == b.best);
    CHECK(a.lower_bound == b.lower_bound);
    if (a.stop_reason != "rounds") continue;
    ++cut;
    CHECK(a.rounds == (i % 2 == 1 ? 3 * 3 + 2 * 4 : 2 * 7));
    for (const auto& [cost, round] : first) CHECK(round <= 7);
  }
  CHECK(cut >= 5);
}

TEST_CASE("anytime_search_RestartsALaggardAndStaysDeterministic") {
  // Two searches on larger problems, a search one epoch behind the best
  // plan starting afresh: the rounds of the searches it replaced still
  // count, the plans only improve, and a second run repeats the first.
  std::mt19937 rng(59u);
  int cut = 0;
  long restarts = 0;
  for (int i = 0; i < 40; ++i) {
    const Problem p = dear_binding_problem(rng);
    CAPTURE(i);
    AnytimeOptions options = restarting_pair(i);
    options.max_rounds = 6;
    std::vector<int64_t> first, second;
    const AnytimeResult a = anytime_search(p, options, falling_steps(p, first));
    const AnytimeResult b = anytime_search(p, options, [&](const AnytimeStep& s) { second.push_back(s.cost); });
    CHECK(first == second);
    CHECK(a.best == b.best);
    if (a.stop_reason != "rounds") continue;
    ++cut;
    restarts += a.restarts;
    CHECK(a.rounds == 2 * 6);
  }
  MESSAGE(restarts << " restarts");
  CHECK(cut >= 5);
  CHECK(restarts >= 1);
}

TEST_CASE("anytime_search_SearchesThatRunAheadGiveTheLockStepsPlansRestartsAndBounds") {
  // Two or three searches, one per thread, restarting laggards: with the
  // searches running up to 1, 3 or 64 epochs ahead of the exchange
  // (epoch_workers.hpp), every step (cost, search, round), the rounds, the
  // restarts, the bound and the stop are those of lock-step epochs.
  std::mt19937 rng(61u);
  long restarts = 0;
  for (int i = 0; i < 24; ++i) {
    const Problem p = dear_binding_problem(rng);
    CAPTURE(i);
    AnytimeOptions options = restarting_pair(i);
    options.threads = 2 + i % 2;
    options.epoch_rounds = 1 + i % 3;
    options.max_rounds = 11;  // the last epoch cut short where epochs are 2 or 3 rounds
    AnytimeResult lock_step, ahead;
    const std::vector<Step> expected = steps_with_lead(p, options, 0, lock_step);
    for (int lead : {1, 3, 64}) {
      CAPTURE(lead);
      CHECK(steps_with_lead(p, options, lead, ahead) == expected);
      CHECK(ahead.best == lock_step.best);
      CHECK(ahead.rounds == lock_step.rounds);
      CHECK(ahead.restarts == lock_step.restarts);
      CHECK(ahead.lower_bound == lock_step.lower_bound);
      CHECK(ahead.stop_reason == lock_step.stop_reason);
    }
    restarts += lock_step.restarts;
  }
  MESSAGE(restarts << " restarts");
  CHECK(restarts >= 5);
}

TEST_CASE("anytime_search_SearchesThatRunAheadOnceTheDualLeavesGiveTheLockStepsPlans") {
  // With the memory dual leaving after two idle epochs, two searches run
  // ahead from then on (lead_epochs 64) or stay in lock-step (0): the
  // same steps, rounds, bound and stop, with the rounds' cap and the stall
  // rule counted from the start.
  std::mt19937 rng(67u);
  int capped = 0, stalled = 0;
  for (int i = 0; i < 20; ++i) {
    const Problem p = dear_binding_problem(rng);
    CAPTURE(i);
    AnytimeOptions options;
    options.threads = 2;
    options.seed = static_cast<uint64_t>(i);
    options.stall_rounds = i % 2 == 0 ? 0 : 6;  // where 6, a stall may end it after the switch
    options.region_attempts = 0;
    options.dual_steps = 2;
    options.dual_patience = 2;
    options.epoch_rounds = 1 + i % 2;
    options.max_rounds = 40;
    AnytimeResult lock_step, ahead;
    const std::vector<Step> expected = steps_with_lead(p, options, 0, lock_step);
    CHECK(steps_with_lead(p, options, 64, ahead) == expected);
    CHECK(ahead.best == lock_step.best);
    CHECK(ahead.rounds == lock_step.rounds);
    CHECK(ahead.lower_bound == lock_step.lower_bound);
    CHECK(ahead.stop_reason == lock_step.stop_reason);
    capped += lock_step.stop_reason == "rounds" && lock_step.rounds == 2 * options.max_rounds;
    stalled += lock_step.stop_reason == "stalled";
  }
  MESSAGE(capped << " runs stopped at the rounds' cap, " << stalled << " stalled");
  CHECK(capped >= 5);
  CHECK(stalled >= 3);
}

TEST_CASE("anytime_search_SearchesThatRunAheadStopAtTheDeadlineWithTheirPlansReported") {
  // Searches running ahead with no round limit, cut by a deadline: the
  // run ends "time limit", and every step, the epochs' run ahead included,
  // is cheaper than the one before and scored right; the best is the last.
  std::mt19937 rng(67u);
  int cut = 0;  // runs cut by the deadline, with plans
  for (int i = 0; i < 6; ++i) {
    const Problem p = dear_binding_problem(rng);
    CAPTURE(i);
    AnytimeOptions options = restarting_pair(i);
    options.lead_epochs = 4;
    options.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
    std::vector<int64_t> costs;
    const AnytimeResult r = anytime_search(p, options, falling_steps(p, costs));
    if (r.stop_reason != "time limit") {  // folded away: infeasible, nothing to price, or proven
      CHECK((r.stop_reason == "infeasible" || r.stop_reason == "finished" || r.stop_reason == "unsat"));
      continue;
    }
    if (costs.empty()) continue;
    ++cut;
    CHECK(r.best_cost == costs.back());
    CHECK(r.lower_bound <= r.best_cost);
  }
  CHECK(cut >= 2);
}

TEST_CASE("falls_too_slowly_RestartsOnlyALaggardThatWouldNotCatchUp") {
  // Behind by 1 and not falling: too slow (M's stuck basin).
  CHECK(falls_too_slowly({100, 100, 100}, 99));
  // Falling by a few units while 20 behind: too slow.
  CHECK(falls_too_slowly({122, 121, 120}, 100));
  // Falling by as much as it is behind, or more: it goes on (S's laggards).
  CHECK_FALSE(falls_too_slowly({100, 95, 90}, 80));
  CHECK_FALSE(falls_too_slowly({130, 100, 90}, 80));
  // Not behind: it holds the best plan.
  CHECK_FALSE(falls_too_slowly({100, 100}, 100));
  // One epoch of history: it has not fallen yet.
  CHECK(falls_too_slowly({101}, 100));
}

TEST_CASE("LagrangianSearch_AdoptTakesOnlyACheaperPlanAsItsIncumbent") {
  std::mt19937 rng(53u);
  int adopted = 0;
  for (int i = 0; i < 40; ++i) {
    const Problem p = dear_binding_problem(rng);
    const FoldedProblem folded = fold_problem(p);
    if (folded.infeasible || folded.kernel.nodes.empty() || !folded.usage_limit) continue;
    CAPTURE(i);
    LagrangianSearch ahead(folded, {.seed = 1, .region_attempts = 0});
    LagrangianSearch behind(folded, {.seed = 2, .region_attempts = 0, .bnb_attempts = 0});
    ahead.run(20);
    behind.run(1);
    if (ahead.incumbent().empty() || behind.incumbent().empty()) continue;
    const Assignment best = ahead.incumbent();
    CHECK(cost_without_usage(folded.kernel, best) == ahead.own_best());
    CHECK_FALSE(ahead.adopt(behind.incumbent()));  // never dearer, nor as dear
    if (ahead.own_best() >= behind.own_best()) continue;
    CHECK(behind.adopt(best));
    ++adopted;
    CHECK(behind.own_best() == ahead.own_best());
    CHECK(behind.incumbent() == best);
    // Its plans from now on beat the adopted one.
    for (const auto& plan : behind.run(5)) CHECK(plan.cost < ahead.own_best());
  }
  MESSAGE(adopted << " adopted");
  CHECK(adopted >= 5);
}

}  // namespace shardsynth::synth
