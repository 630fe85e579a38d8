// The network portfolio (network_portfolio.hpp) on random small problems
// with a usage limit, each searched as two networks (plain, and penalized
// with random multipliers): it finds and proves the optimum as each network
// alone does; its winner is the member that closes alone with the least
// work (ties: the lower index), with that member's plans; one thread and
// two give the same result; and where neither member closes within the
// work budget, the merged plans fall strictly and end at the better
// member's plan.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "sanitized.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/network_inputs.hpp"
#include "synth/solver/network_portfolio.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {
namespace {

using Plans = std::vector<std::pair<Assignment, int64_t>>;

// `input` searched alone, as a portfolio member would be without rivals.
std::pair<NetworkSearch, Plans> alone(const NetworkInput& input, int64_t incumbent,
                                      const NetworkSearchOptions& options) {
  Plans plans;
  NetworkSearch found = search_network(input, incumbent, {}, options, [&plans](const Assignment& plan, int64_t cost) {
    plans.emplace_back(plan, cost);
  });
  return {found, plans};
}

// The winner by the portfolio's rule among `runs`, or -1.
int expected_winner(const std::vector<std::pair<NetworkSearch, Plans>>& runs) {
  int winner = -1;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].first.outcome != "closed") continue;
    if (winner < 0 || runs[i].first.work < runs[winner].first.work) winner = static_cast<int>(i);
  }
  return winner;
}

}  // namespace

TEST_CASE("network_portfolio_TheLeastWorkClosesAndTheThreadsDoNotMatter") {
  std::mt19937 rng(3029);
  const auto check = [&](const Problem& p, const FoldedProblem& folded, int64_t optimum) {
    const NetworkInput plain = folded_input(p, folded, rng, false);
    const NetworkInput penalized = folded_input(p, folded, rng, true);
    const std::vector<const NetworkInput*> members = {&penalized, &plain};
    const int64_t loose = optimum + 1 + static_cast<int64_t>(rng() % (optimum + 2));
    for (const int64_t incumbent : {kForbidden, loose, optimum}) {
      CAPTURE(incumbent);
      const std::vector<std::pair<NetworkSearch, Plans>> runs = {alone(penalized, incumbent, {}),
                                                                 alone(plain, incumbent, {})};
      const int winner = expected_winner(runs);
      REQUIRE(winner >= 0);
      for (const int threads : {1, 2}) {
        CAPTURE(threads);
        const PortfolioRun run = search_portfolio(members, incumbent, {}, {},
                                                  /*climb=*/false, threads);
        CHECK(run.winner == winner);
        CHECK(run.found.outcome == "closed");
        CHECK(run.found.work == runs[winner].first.work);
        CHECK(run.found.incumbent == std::min(incumbent, optimum));
        CHECK(run.plans == runs[winner].second);
        if (incumbent > optimum) CHECK(evaluate(p, unfold(folded, run.found.plan)) == optimum);
      }
    }
    return true;
  };
  const int checked = for_each_limited_problem(rng, testing::scaled(600),
                                               /*mixed=*/true, check);
  CHECK(checked > testing::scaled(80));
}

TEST_CASE("network_portfolio_WithoutAClosureThePlansOfBothMembersMerge") {
  std::mt19937 rng(3030);
  int checked = 0;
  for (int i = 0; i < testing::scaled(400); ++i) {
    const Problem p = binding_problem(rng, 8);
    if (!p.usage_limit || brute_force(p).cost >= kForbidden) continue;
    CAPTURE(i);
    const FoldedProblem folded = fold_problem(p);
    const NetworkInput plain = folded_input(p, folded, rng, false);
    const NetworkInput penalized = folded_input(p, folded, rng, true);
    NetworkSearchOptions tight;
    tight.max_work = 1 + static_cast<long>(rng() % 60);
    const auto a = alone(penalized, kForbidden, tight);
    const auto b = alone(plain, kForbidden, tight);
    if (a.first.outcome == "closed" || b.first.outcome == "closed") continue;
    const PortfolioRun one = search_portfolio({&penalized, &plain}, kForbidden, {}, tight, false, 1);
    const PortfolioRun two = search_portfolio({&penalized, &plain}, kForbidden, {}, tight, false, 2);
    CHECK(one.winner == -1);
    CHECK(one.plans == two.plans);
    CHECK(one.found.work == a.first.work + b.first.work);
    CHECK(one.found.incumbent == std::min(a.first.incumbent, b.first.incumbent));
    CHECK(one.found.root_bound == std::max(a.first.root_bound, b.first.root_bound));
    for (std::size_t k = 1; k < one.plans.size(); ++k) CHECK(one.plans[k].second < one.plans[k - 1].second);
    if (!one.plans.empty()) CHECK(one.plans.back().second == one.found.incumbent);
    ++checked;
  }
  CHECK(checked > 0);
}

}  // namespace shardsynth::synth
