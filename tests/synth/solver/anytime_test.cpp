// The anytime side of the solver against definitions and exhaustive search:
// the usage profile against a plain array, folding against the original
// problem's costs and optimum, moves and repair against the profile's
// definition, Z3 on a region against brute force, and the whole anytime
// search on random problems whose usage limit binds.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <random>
#include <vector>

#include "synth/solver/anytime.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/local_search.hpp"
#include "synth/solver/region_bnb.hpp"
#include "synth/solver/region_cegis.hpp"
#include "synth/solver/step_rule.hpp"
#include "synth/solver/test_problems.hpp"
#include "synth/solver/usage_profile.hpp"

namespace shardsynth::synth {
namespace {

// Brute force over the kernel of a folded problem, under its usage profile.
int64_t folded_optimum(const FoldedProblem& f) {
  int64_t best = kForbidden;
  for_each_assignment(f.kernel, [&](const Assignment& x) {
    const int64_t c = cost_without_usage(f.kernel, x);
    if (c >= kForbidden) return;
    if (f.usage_limit) {
      for (int64_t v : usage_profile_of(f, x)) {
        if (v > *f.usage_limit) return;
      }
    }
    best = std::min(best, cost_add(c, f.constant));
  });
  return best;
}

}  // namespace

TEST_CASE("UsageProfile_MatchesAPlainArray") {
  std::mt19937 rng(7u);
  for (int round = 0; round < 200; ++round) {
    const int slots = std::uniform_int_distribution<int>(1, 40)(rng);
    std::vector<int64_t> plain(slots);
    for (auto& v : plain) v = std::uniform_int_distribution<int>(-5, 5)(rng);
    UsageProfile profile(plain);
    for (int op = 0; op < 60; ++op) {
      int a = std::uniform_int_distribution<int>(0, slots)(rng), b = std::uniform_int_distribution<int>(0, slots)(rng);
      if (a > b) std::swap(a, b);
      const int64_t d = std::uniform_int_distribution<int>(-7, 7)(rng);
      profile.add(a, b, d);
      for (int t = a; t < b; ++t) plain[t] += d;
      int c = std::uniform_int_distribution<int>(0, slots)(rng), e = std::uniform_int_distribution<int>(0, slots)(rng);
      if (c > e) std::swap(c, e);
      const int64_t want = c < e ? *std::max_element(plain.begin() + c, plain.begin() + e) : INT64_MIN;
      CHECK(profile.max(c, e) == want);
      const int64_t limit = std::uniform_int_distribution<int>(-3, 8)(rng);
      int first = -1;
      for (int t = c; t < e && first < 0; ++t) {
        if (plain[t] > limit) first = t;
      }
      CHECK(profile.first_above(c, e, limit) == first);
    }
    CHECK(profile.values() == plain);
    CHECK(profile.max() == *std::max_element(plain.begin(), plain.end()));
  }
}

TEST_CASE("fold_problem_KeepsCostsUsagesAndTheOptimum") {
  std::mt19937 rng(11u);
  int folded_some = 0, fixed_some = 0, feasible = 0;
  for (int i = 0; i < 1500; ++i) {
    Problem p = binding_problem(rng, 8);
    if (i % 4 == 3) p.usage_limit.reset();
    CAPTURE(i);
    const int64_t optimum = brute_force(p).cost;
    const FoldedProblem f = fold_problem(p);
    if (f.infeasible) {
      CHECK(optimum >= kForbidden);
      continue;
    }
    folded_some += f.folded_followers > 0;
    fixed_some += f.fixed_nodes > 0;
    CHECK(f.kernel.nodes.size() <= p.nodes.size());
    CHECK(folded_optimum(f) == optimum);
    feasible += optimum < kForbidden;
    // Every kernel assignment: its unfolded cost and usage are the original's.
    for_each_assignment(f.kernel, [&](const Assignment& x) {
      const Assignment full = unfold(f, x);
      CHECK(cost_without_usage(p, full) == cost_add(cost_without_usage(f.kernel, x), f.constant));
      if (p.usage_limit) {
        bool fits = true;
        for (int64_t v : usage_profile_of(f, x)) fits = fits && v <= *p.usage_limit;
        CHECK(fits == within_usage_limit(p, full));
      }
    });
  }
  MESSAGE(feasible << " feasible; folded followers in " << folded_some << ", fixed nodes in " << fixed_some);
  CHECK(folded_some >= 200);
  CHECK(fixed_some >= 200);
}

TEST_CASE("LocalSearch_MovesRepairAndForestMovesKeepTheProfileTrue") {
  std::mt19937 rng(13u);
  std::mt19937_64 rng64(13u);
  int repaired = 0;
  for (int i = 0; i < 400; ++i) {
    const Problem p = binding_problem(rng, 10);
    const FoldedProblem f = fold_problem(p);
    if (f.infeasible || f.kernel.nodes.empty()) continue;
    CAPTURE(i);
    LocalSearch ls(f);
    Assignment x(f.kernel.nodes.size(), 0);
    ls.set(x);
    auto check_profile = [&] { CHECK(ls.profile().values() == usage_profile_of(f, ls.assignment())); };
    std::vector<int> order(f.kernel.nodes.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
    for (int k = 0; k < 3; ++k) {
      const int64_t before = ls.cost();
      ls.forest_move(rng64, nullptr);
      CHECK(ls.cost() <= before);  // a joint optimum over each tree never costs more
      check_profile();
    }
    ls.descend(order, nullptr, false);
    check_profile();
    if (ls.repair(nullptr, 1000)) {
      ++repaired;
      CHECK(ls.feasible());
      const int64_t before = ls.cost();
      ls.descend(order, nullptr, true);
      CHECK(ls.feasible());
      CHECK(ls.cost() <= before);
    }
    check_profile();
  }
  CHECK(repaired >= 100);
}

TEST_CASE("LocalSearch_LocalCostsOfAllStrategiesMatchThemOneAtATime") {
  std::mt19937 rng(31u);
  int compared = 0;
  for (int i = 0; i < 300; ++i) {
    const Problem p = binding_problem(rng, 10);
    const FoldedProblem f = fold_problem(p);
    if (f.infeasible || f.kernel.nodes.empty()) continue;
    CAPTURE(i);
    LocalSearch ls(f);
    Assignment x(f.kernel.nodes.size());
    for (std::size_t u = 0; u < x.size(); ++u) x[u] = static_cast<int>(rng() % f.kernel.nodes[u].size());
    ls.set(x);
    std::vector<int64_t> all;
    for (int u = 0; u < static_cast<int>(x.size()); ++u) {
      ls.local_costs(u, all);
      REQUIRE(all.size() == f.kernel.nodes[u].costs.size());
      for (int s = 0; s < static_cast<int>(all.size()); ++s) CHECK(all[s] == ls.local_cost(u, s));
      ++compared;
    }
  }
  CHECK(compared >= 500);
}

TEST_CASE("LocalSearch_DescentEndsWhereNoSingleMoveIsCheaperOrNoneThatIsFits") {
  // The descent skips nodes whose neighbours did not move since they were
  // scored; where it ends, still no node has a cheaper strategy (forced
  // moves), or none that fits (moves that must fit). A node at a forbidden
  // choice counts: any allowed one is cheaper.
  std::mt19937 rng(37u);
  int limited = 0;
  for (int i = 0; i < 300; ++i) {
    const Problem p = binding_problem(rng, 12);
    const FoldedProblem f = fold_problem(p);
    if (f.infeasible || f.kernel.nodes.empty()) continue;
    CAPTURE(i);
    const int n = static_cast<int>(f.kernel.nodes.size());
    std::vector<int> order(n);
    for (int k = 0; k < n; ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), rng);
    for (const bool keep_limit : {false, true}) {
      LocalSearch ls(f);
      ls.set(Assignment(n, 0));
      if (keep_limit && !ls.repair(nullptr, 1000)) continue;
      limited += keep_limit;
      ls.descend(order, nullptr, keep_limit);
      for (int u = 0; u < n; ++u) {
        const int64_t here = ls.local_cost(u, ls.assignment()[u]);
        for (int s = 0; s < f.kernel.nodes[u].size(); ++s) {
          if (ls.local_cost(u, s) >= here) continue;
          CHECK(keep_limit);  // forced moves: nothing cheaper is left
          LocalSearch probe = ls;
          CHECK_FALSE(probe.move(u, s));  // it does not fit
        }
      }
    }
  }
  CHECK(limited >= 50);
}

namespace {

// Calls `check(p, f, ls)` on `count` random binding problems of `nodes`
// nodes drawn from `seed` whose folded kernel `f` has at least `min_nodes`
// nodes and a feasible start: `ls` holds strategy 0 everywhere, repaired.
template <class Check>
void for_each_repaired_start(unsigned seed, int count, int nodes, std::size_t min_nodes, Check check) {
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    const Problem p = binding_problem(rng, nodes);
    const FoldedProblem f = fold_problem(p);
    if (f.infeasible || f.kernel.nodes.size() < min_nodes) continue;
    CAPTURE(i);
    LocalSearch ls(f);
    ls.set(Assignment(f.kernel.nodes.size(), 0));
    if (!ls.repair(nullptr, 1000) || ls.cost() >= kForbidden) continue;
    check(p, f, ls);
  }
}

// The whole kernel as one region.
std::vector<int> every_node(const FoldedProblem& f) {
  std::vector<int> all(f.kernel.nodes.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);
  return all;
}

}  // namespace

TEST_CASE("improve_region_OnTheWholeKernelReachesTheOptimum") {
  int proven = 0;
  for_each_repaired_start(17u, 300, 7, 1, [&](const Problem& p, const FoldedProblem& f, LocalSearch& ls) {
    const RegionOutcome r = improve_region(ls, every_node(f), {}, std::nullopt);
    REQUIRE(r.proven);
    ++proven;
    CHECK(ls.feasible());
    CHECK(cost_add(ls.cost(), f.constant) == brute_force(p).cost);
    CHECK(evaluate(p, unfold(f, ls.assignment())) == brute_force(p).cost);
  });
  CHECK(proven >= 100);
}

TEST_CASE("improve_region_MakesNoCheckPastTheRegionsTotalOfResourceUnits") {
  // With one unit for all its checks together, the loop stops at its first
  // check (or before it), leaves the start as it is and proves nothing; the
  // same starts without the total are proven.
  int stopped = 0;
  for_each_repaired_start(17u, 100, 7, 1, [&](const Problem&, const FoldedProblem& f, LocalSearch& ls) {
    LocalSearch unlimited = ls;
    const Assignment before = ls.assignment();
    const RegionOutcome r = improve_region(ls, every_node(f), {0, 1}, std::nullopt);
    CHECK(r.checks <= 1);
    CHECK_FALSE(r.proven);
    CHECK(ls.assignment() == before);
    CHECK(improve_region(unlimited, every_node(f), {}, std::nullopt).proven);
    ++stopped;
  });
  CHECK(stopped >= 30);
}

TEST_CASE("solve_region_bnb_OnTheWholeKernelReachesTheOptimum") {
  int proven = 0, improved = 0;
  for_each_repaired_start(23u, 400, 9, 1, [&](const Problem& p, const FoldedProblem& f, LocalSearch& ls) {
    const int64_t start = ls.cost();
    const BnbOutcome r = solve_region_bnb(ls, every_node(f), 0, std::nullopt);
    REQUIRE(r.proven);
    ++proven;
    improved += r.improved;
    CHECK(r.improved == (ls.cost() < start));
    CHECK(r.cost == ls.cost());
    CHECK(ls.feasible());
    CHECK(ls.profile().values() == usage_profile_of(f, ls.assignment()));
    CHECK(cost_add(ls.cost(), f.constant) == brute_force(p).cost);
    CHECK(r.root_bound <= ls.cost());  // the root's bound leaves out the memory rows: at most the optimum
  });
  CHECK(proven >= 150);
  CHECK(improved >= 50);
}

TEST_CASE("solve_region_bnb_MessagesMakeTheRootBoundExactOnAChain") {
  // a - b - c, two strategies each: a and c dislike strategy 1, a wants b
  // to differ from it, b wants c equal to it. Every plan pays 10 somewhere,
  // but each table alone has a free entry in every row and column, so
  // projecting each edge onto its ends proves nothing (bound 0); messages
  // along the chain carry a's and c's costs to b and prove 10.
  Problem p{"chain", {}, {}, std::nullopt};
  p.nodes.push_back({"a", {0, 10}, {}, 0, 0});
  p.nodes.push_back({"b", {0, 0}, {}, 0, 0});
  p.nodes.push_back({"c", {0, 10}, {}, 0, 0});
  p.edges.push_back({0, 1, {10, 0, 0, 10}});
  p.edges.push_back({1, 2, {0, 10, 10, 0}});
  REQUIRE(brute_force(p).cost == 10);
  const FoldedProblem f = fold_problem(p);
  REQUIRE(f.kernel.nodes.size() == 3);
  LocalSearch ls(f);
  ls.set(Assignment(3, 1));  // costs 30: a 10, a-b 10, c 10
  const BnbOutcome r = solve_region_bnb(ls, every_node(f), 0, std::nullopt);
  CHECK(r.root_bound == 10);
  CHECK(r.proven);
  CHECK(cost_add(ls.cost(), f.constant) == 10);
}

TEST_CASE("solve_region_bnb_OnARegionNeverWorsensAndStopsAtItsWorkBudget") {
  std::mt19937_64 rng64(29u);
  int cut_short = 0;
  for_each_repaired_start(29u, 300, 12, 4, [&](const Problem&, const FoldedProblem& f, LocalSearch& ls) {
    const int64_t start = ls.cost();
    const auto region = grow_region(f.kernel, ls.incidences(), 0, 3, rng64);
    const BnbOutcome r = solve_region_bnb(ls, region, 2, std::nullopt);
    CHECK(r.visits <= 2);
    cut_short += !r.proven;
    CHECK(ls.feasible());
    CHECK(ls.cost() <= start);
    CHECK(ls.profile().values() == usage_profile_of(f, ls.assignment()));
  });
  CHECK(cut_short >= 20);
}

TEST_CASE("anytime_search_FindsFeasiblePlansWithValidBounds") {
  std::mt19937 rng(19u);
  int found = 0, optimal = 0, proven = 0;
  for (int i = 0; i < 200; ++i) {
    const Problem p = binding_problem(rng, 9);
    CAPTURE(i);
    const int64_t optimum = brute_force(p).cost;
    AnytimeOptions options;
    options.threads = 1 + i % 2;
    options.seed = static_cast<uint64_t>(i);
    options.stall_rounds = 20;
    int64_t last = kForbidden;
    const AnytimeResult r = anytime_search(p, options, [&](const AnytimeStep& step) {
      CHECK(step.cost < last);  // strictly improving
      CHECK(evaluate(p, step.assignment) == step.cost);
      last = step.cost;
    });
    if (r.infeasible) {
      CHECK(optimum >= kForbidden);
      continue;
    }
    CHECK(r.lower_bound <= optimum);
    if (r.best.empty()) continue;
    ++found;
    CHECK(evaluate(p, r.best) == r.best_cost);
    CHECK(r.best_cost >= optimum);
    CHECK(r.best_cost == last);
    optimal += r.best_cost == optimum;
    if (!r.proven_optimal) MESSAGE("unproven " << i << " " << r.stop_reason << " kernel " << r.kernel_nodes << " rounds " << r.rounds);
    if (r.proven_optimal) {
      ++proven;
      CHECK(r.best_cost == optimum);
      CHECK(r.lower_bound == optimum);
    }
  }
  MESSAGE(found << " with a plan, " << optimal << " of them optimal, " << proven << " proven");
  CHECK(found >= 100);
  CHECK(proven * 10 >= found * 9);
  CHECK(optimal * 10 >= found * 7);
}

TEST_CASE("anytime_search_IsDeterministicForASeedAndThreadCount") {
  std::mt19937 rng(23u);
  for (int i = 0; i < 15; ++i) {
    const Problem p = binding_problem(rng, 12);
    AnytimeOptions options;
    options.threads = 2;
    options.seed = 5;
    options.stall_rounds = 12;
    std::vector<int64_t> first, second;
    const AnytimeResult a = anytime_search(p, options, [&](const AnytimeStep& s) { first.push_back(s.cost); });
    const AnytimeResult b = anytime_search(p, options, [&](const AnytimeStep& s) { second.push_back(s.cost); });
    CHECK(first == second);
    CHECK(a.best == b.best);
    CHECK(a.lower_bound == b.lower_bound);
  }
}

}  // namespace shardsynth::synth

namespace shardsynth::synth {

TEST_CASE("anytime_search_NeverEndsWorseThanItsStart") {
  // Given the costliest plan that keeps the limit as its start, the search
  // reports only cheaper plans, ends at most at the start's cost, and still
  // reaches the optimum about as often as without a start.
  std::mt19937 rng(31u);
  int started = 0, improved = 0, optimal = 0;
  for (int i = 0; i < 200; ++i) {
    const Problem p = binding_problem(rng, 9);
    Assignment worst;
    int64_t worst_cost = -1;
    for_each_assignment(p, [&](const Assignment& x) {
      const int64_t c = evaluate(p, x);
      if (c < kForbidden && c > worst_cost) {
        worst = x;
        worst_cost = c;
      }
    });
    if (worst.empty()) continue;
    CAPTURE(i);
    ++started;
    AnytimeOptions options;
    options.threads = 1 + i % 2;
    options.seed = static_cast<uint64_t>(i);
    options.stall_rounds = 20;
    options.start = worst;
    int64_t last = worst_cost;
    const AnytimeResult r = anytime_search(p, options, [&](const AnytimeStep& step) {
      CHECK(step.cost < last);
      CHECK(evaluate(p, step.assignment) == step.cost);
      last = step.cost;
    });
    REQUIRE_FALSE(r.best.empty());
    CHECK(r.best_cost == last);
    CHECK(evaluate(p, r.best) == r.best_cost);
    CHECK(r.best_cost <= worst_cost);
    CHECK(r.lower_bound <= r.best_cost);
    improved += r.best_cost < worst_cost;
    optimal += r.best_cost == brute_force(p).cost;
  }
  MESSAGE(started << " started, " << improved << " improved on the start, " << optimal << " optimal");
  CHECK(started >= 100);
  CHECK(optimal * 10 >= started * 7);
}

}  // namespace shardsynth::synth

namespace shardsynth::synth {

TEST_CASE("anytime_search_StopsOnceAPlanIsGoodEnough") {
  // A search that ran until it stalled, run again with good_enough at the
  // cost it ended at, ends once it has such a plan, no later, and says so.
  std::mt19937 rng(37u);
  int stopped = 0;
  for (int i = 0; i < 40; ++i) {
    const Problem p = binding_problem(rng, 12);
    CAPTURE(i);
    AnytimeOptions options;
    options.stall_rounds = 30;
    options.region_attempts = 0;
    const AnytimeResult free = anytime_search(p, options, nullptr);
    if (free.stop_reason != "stalled" || free.best.empty()) continue;
    ++stopped;
    options.good_enough = free.best_cost;
    const AnytimeResult r = anytime_search(p, options, nullptr);
    CHECK(r.stop_reason == "good enough");
    CHECK(r.best_cost <= free.best_cost);
    CHECK(r.rounds <= free.rounds);
  }
  MESSAGE(stopped << " searches stalled and were run again with good_enough");
  CHECK(stopped >= 5);
}

// Two nodes that no folding merges (neither one's strategy fixes the
// other's), where the only move that frees memory is forbidden against the
// neighbour as it is: the repair must move both at once.
TEST_CASE("LocalSearch_RepairMovesANodeWithTheNeighbourAForbiddenPairTiesToIt") {
  constexpr int64_t F = kForbidden;
  // Each strategy fits beside the other node's least usage (so folding keeps
  // it), but u0 with w0 uses 10 > 8, and the freeing moves u0 -> u1 and
  // w0 -> w1 are each forbidden against the other node as it is.
  Problem p{"tied", {}, {}, 8};
  p.nodes.push_back({"u", {0, 0, 100}, {6, 2, 6}, 0, 4});
  p.nodes.push_back({"w", {0, 0, 100}, {4, 1, 4}, 0, 4});
  // Allowed: (u0, w0), (u0, w2), (u1, w1), (u1, w2), (u2, w0), (u2, w1).
  p.edges.push_back({0, 1, {0, F, 0, F, 0, 0, 0, 0, F}});
  const FoldedProblem f = fold_problem(p);
  REQUIRE(f.kernel.nodes.size() == 2);
  LocalSearch ls(f);
  Assignment start(2, 0);  // u0, w0 (the kernel may renumber strategies)
  for (int s = 0; s < f.kernel.nodes[f.root[0]].size(); ++s) {
    if (f.strategy_of[0][s] == 0) start[f.root[0]] = s;
  }
  for (int s = 0; s < f.kernel.nodes[f.root[1]].size(); ++s) {
    if (f.strategy_of[1][s] == 0) start[f.root[1]] = s;
  }
  ls.set(start);
  REQUIRE(!ls.feasible());
  REQUIRE(ls.cost() < kForbidden);
  CHECK(ls.repair(nullptr, 100));
  CHECK(ls.feasible());
  CHECK(ls.cost() < kForbidden);
  CHECK(ls.profile().values() == usage_profile_of(f, ls.assignment()));
  const Assignment x = unfold(f, ls.assignment());
  CHECK(x == Assignment{1, 1});
}

// Polyak's step with lambda = 0, g = 1, norm 1, bound 0, best 100: the move
// is the factor times 100, so the factor shows in lambda's increments.
std::vector<double> increments(StepRule& rule, const std::vector<double>& duals) {
  std::vector<double> lambda{0.0}, out;
  for (double dual : duals) {
    const double before = lambda[0];
    Subgradient sub{{1.0}, 1.0, dual};
    rule.update(sub, {0, 100}, lambda);
    out.push_back(lambda[0] - before);
  }
  return out;
}

TEST_CASE("StallingPolyakStep_HalvesOnlyWhenTheDualStalls") {
  std::vector<double> rising(20), flat(20, 5.0);
  for (int k = 0; k < 20; ++k) rising[k] = 1.0 + k;
  StallingPolyakStep on_rising(8);
  for (double d : increments(on_rising, rising)) CHECK(d == doctest::Approx(100.0));
  StallingPolyakStep on_flat(8);
  const std::vector<double> flat_steps = increments(on_flat, flat);
  CHECK(flat_steps[0] == doctest::Approx(100.0));  // the first dual value is a new best
  CHECK(flat_steps[8] == doctest::Approx(50.0));   // eight rounds without a better one
  CHECK(flat_steps[16] == doctest::Approx(25.0));
  // PolyakStep, as measured before: the factor halves every 8 rounds whatever the dual does.
  PolyakStep cyclic;
  CHECK(increments(cyclic, rising)[7] == doctest::Approx(50.0));
}

}  // namespace shardsynth::synth

namespace shardsynth::synth {

TEST_CASE("anytime_search_PublishesEachRiseOfItsLowerBoundAsItIsProven") {
  // The bounds handed to on_bound rise strictly, never pass the optimum,
  // and end at the bound the search returns: a caller that stops waiting
  // at the deadline (time_guard.hpp) has the same bound as one that waits.
  std::mt19937 rng(41u);
  int with_bound = 0;
  for (int i = 0; i < 120; ++i) {
    const Problem p = binding_problem(rng, 9);
    CAPTURE(i);
    const int64_t optimum = brute_force(p).cost;
    AnytimeOptions options;
    options.threads = 1 + i % 2;
    options.seed = static_cast<uint64_t>(i);
    options.stall_rounds = 20;
    std::vector<int64_t> published;
    options.on_bound = [&](int64_t bound) { published.push_back(bound); };
    const AnytimeResult r = anytime_search(p, options, nullptr);
    if (r.infeasible) continue;
    CHECK(std::is_sorted(published.begin(), published.end()));
    CHECK(std::adjacent_find(published.begin(), published.end()) == published.end());
    for (const int64_t bound : published) CHECK(bound <= optimum);
    if (r.lower_bound == 0) continue;
    ++with_bound;
    REQUIRE_FALSE(published.empty());
    CHECK(published.back() == r.lower_bound);
  }
  MESSAGE(with_bound << " searches ended with a positive bound");
  CHECK(with_bound >= 60);
}

}  // namespace shardsynth::synth

namespace shardsynth::synth {
namespace {

// One search with seed `seed`, without Z3 regions, stalled after two
// rounds without improvement (the stall rule's tests).
AnytimeOptions quickly_stalling_search(int seed) {
  AnytimeOptions options;
  options.seed = static_cast<uint64_t>(seed);
  options.region_attempts = 0;
  options.stall_rounds = 2;
  return options;
}

}  // namespace

TEST_CASE("anytime_search_StallsOnlyAfterRatioTimesTheRoundsToItsLastImprovement") {
  // One search, one round an epoch: it stops, stalled, exactly
  // max(stall_rounds, stall_ratio * L) rounds after its last improvement
  // in round L.
  std::mt19937 rng(43u);
  int stalled = 0, ratio_decided = 0;
  for (int i = 0; i < 60; ++i) {
    const Problem p = binding_problem(rng, 12);
    CAPTURE(i);
    AnytimeOptions options = quickly_stalling_search(i);
    options.stall_ratio = 3;
    long last = 0;
    const AnytimeResult r = anytime_search(p, options, [&](const AnytimeStep& step) { last = step.round; });
    if (r.stop_reason != "stalled") continue;
    ++stalled;
    const long wait = std::max<long>(2, 3 * last);
    ratio_decided += wait > 2;
    CHECK(r.rounds == last + wait);
  }
  MESSAGE(stalled << " searches stalled, " << ratio_decided << " of them where the ratio decided");
  CHECK(ratio_decided >= 5);
}

TEST_CASE("anytime_search_StallsOnlyOnceItsBestPlanIsAtMostStallBelow") {
  // The same searches with stall_below: where the best plan stays above
  // it, the stall rule never stops the search (the rounds' cap does);
  // where it is reached, the search stalls as it would without it.
  std::mt19937 rng(43u);
  int held = 0, reached = 0;
  for (int i = 0; i < 40; ++i) {
    const Problem p = binding_problem(rng, 12);
    CAPTURE(i);
    AnytimeOptions options = quickly_stalling_search(i);
    options.max_rounds = 60;
    const AnytimeResult free = anytime_search(p, options, {});
    if (free.stop_reason != "stalled") continue;
    options.stall_below = free.best_cost - 1;  // below every plan the search finds
    const AnytimeResult held_up = anytime_search(p, options, {});
    CHECK(held_up.stop_reason == "rounds");
    CHECK(held_up.best_cost == free.best_cost);
    held += held_up.stop_reason == "rounds";
    options.stall_below = free.best_cost;
    const AnytimeResult at = anytime_search(p, options, {});
    CHECK(at.stop_reason == "stalled");
    CHECK(at.rounds == free.rounds);
    reached += at.stop_reason == "stalled";
  }
  MESSAGE(held << " searches ran to the rounds' cap above stall_below, " << reached << " stalled at it");
  CHECK(held >= 10);
}

}  // namespace shardsynth::synth

namespace shardsynth::synth {

TEST_CASE("improve_region_LeavesARegionWhoseEncodingPassesTheCapUntried") {
  // Four nodes, each edge of the complete graph a full table: at 12
  // strategies the region is searched, at 300 (6 x 90,000 entries) it
  // passes kMaxEncodedTerms and nothing is tried.
  auto complete = [](int strategies) {
    std::mt19937 rng(7u);
    Problem p;
    for (int u = 0; u < 4; ++u) {
      ProblemNode node;
      for (int s = 0; s < strategies; ++s) node.costs.push_back(static_cast<int64_t>(rng() % 1000));
      p.nodes.push_back(node);
    }
    for (int a = 0; a < 4; ++a) {
      for (int b = a + 1; b < 4; ++b) {
        std::vector<int64_t> table(static_cast<std::size_t>(strategies) * strategies);
        for (auto& c : table) c = static_cast<int64_t>(rng() % 1000);
        p.edges.push_back({a, b, table});
      }
    }
    return p;
  };
  for (const int strategies : {12, 300}) {
    CAPTURE(strategies);
    const FoldedProblem f = fold_problem(complete(strategies));
    REQUIRE(f.kernel.nodes.size() == 4);
    LocalSearch ls(f);
    ls.set(Assignment(4, strategies - 1));
    const Assignment before = ls.assignment();
    const RegionOutcome r = improve_region(ls, every_node(f), {}, std::nullopt);
    CHECK(r.too_large == (strategies == 300));
    CHECK(r.cost == ls.cost());
    if (r.too_large) {
      CHECK(r.checks == 0);
      CHECK(ls.assignment() == before);
    } else {
      CHECK(r.proven);
    }
  }
}

}  // namespace shardsynth::synth
