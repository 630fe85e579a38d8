// The cost network's branch and bound (network_search.hpp) against
// exhaustive search on random small problems with a usage limit: run on the
// folded kernel with its time slots as knapsack rows, with and without
// penalties of random multipliers and a reparameterization on top, it finds
// the optimum when no incumbent is handed in, closes at once below it, and
// its root bound never passes it; with the optimum + 1 as the cutoff
// (values pruned against it from the root on) it still finds the optimum;
// under climbing cutoffs (network_cutoffs.hpp) from a loose incumbent it
// finds and proves the optimum too.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "sanitized.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/cegis.hpp"
#include "synth/solver/dual_bound.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/network_cutoffs.hpp"
#include "synth/solver/network_inputs.hpp"
#include "synth/solver/network_search.hpp"
#include "synth/solver/row_penalties.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {

TEST_CASE("network_search_FindsAndProvesTheOptimumOfSmallLimitedProblems") {
  std::mt19937 rng(2032);
  const auto check = [&](const Problem& p, const FoldedProblem& folded, int64_t optimum) {
    for (const bool penalize : {false, true}) {
      CAPTURE(penalize);
      const NetworkInput input = folded_input(p, folded, rng, penalize);
      const NetworkSearch found = search_network(input, kForbidden, {}, {});
      CHECK(found.outcome == "closed");
      CHECK(found.incumbent == optimum);
      CHECK(found.root_bound <= optimum);
      CHECK(evaluate(p, unfold(folded, found.plan)) == optimum);
      const NetworkSearch above = search_network(input, optimum + 1, {}, {});
      CHECK(above.outcome == "closed");
      CHECK(above.incumbent == optimum);
      const NetworkSearch below = search_network(input, optimum, {}, {});
      CHECK(below.outcome == "closed");
      CHECK(below.plan.empty());
      CHECK(below.incumbent == optimum);
      // under climbing cutoffs, from a loose incumbent: the optimum, closed,
      // and no bound above it
      const int64_t loose = optimum + 1 + static_cast<int64_t>(rng() % (optimum + 2));
      const NetworkSearch climbed = search_network_by_cutoffs(input, loose, {}, {});
      CHECK(climbed.outcome == "closed");
      CHECK(climbed.incumbent == optimum);
      CHECK(climbed.root_bound <= optimum);
      CHECK(evaluate(p, unfold(folded, climbed.plan)) == optimum);
      const NetworkSearch at = search_network_by_cutoffs(input, optimum, {}, {});
      CHECK(at.outcome == "closed");
      CHECK(at.plan.empty());
    }
    return true;
  };
  const int checked = for_each_limited_problem(rng, testing::scaled(1500),
                                               /*mixed=*/true, check);
  CHECK(checked > testing::scaled(200));
}

}  // namespace shardsynth::synth

namespace shardsynth::synth {

// The exact loop with its network step, without the branching and on every
// other problem without the elimination, on small problems whose limit
// binds: the proof still ends in
// Z3's unsat at the brute-force optimum, every published bound is at most
// the optimum, and where the step runs it closes, with nothing but Z3's
// last check after it (not the elimination).
TEST_CASE("run_cegis_TheNetworkStepClosesBeforeZ3sLastCheck") {
  std::mt19937 rng(2033);
  int closed = 0, ran = 0;
  for (int i = 0; i < testing::scaled(2000); ++i) {
    const Problem p = binding_problem(rng, 9);
    if (!p.usage_limit) continue;
    const int64_t optimum = brute_force(p).cost;
    if (optimum >= kForbidden) continue;
    CAPTURE(i);
    CegisOptions options;
    options.anytime = AnytimeMode::never;
    options.elimination = i % 2 == 0;  // with it, a closed network step must leave it nothing to do
    options.lp_branching = BranchingMode::never;
    const CegisResult r = run_cegis(p, options, nullptr);
    CHECK(r.proven_optimal);
    CHECK(r.best_cost == optimum);
    CHECK(r.lower_bound <= optimum);
    CHECK(r.iterations.back().status == CheckStatus::unsat);
    CHECK(r.iterations.back().source == "z3");
    for (std::size_t k = 0; k + 1 < r.iterations.size(); ++k) {
      if (r.iterations[k].source != "network" || r.iterations[k].status == CheckStatus::sat) continue;
      ++ran;
      if (r.iterations[k].status != CheckStatus::unsat) continue;
      ++closed;
      CHECK(k + 2 == r.iterations.size());
    }
  }
  MESSAGE(ran << " network steps, " << closed << " closed");
  CHECK(ran >= testing::scaled(40));
  CHECK(closed == ran);  // problems this small close well within the step's nodes
}

}  // namespace shardsynth::synth
