#pragma once
// The LP relaxation (lp_relaxation.hpp) of a problem too large for it whole,
// by pricing its edge pairs (column generation). Most of a large problem's
// LP columns are pairs of an edge's table (GPT-2 xl on 2x4: 1.7M of them
// against 63k strategies), and few of them carry weight in the LP's
// optimum. The LP is solved with every strategy but only some pairs: at
// first, for each strategy of each end, its cheapest pair, and the pairs
// of the plans given; the pairs left out are then priced with the marginal
// rows' duals (LpRelaxation::from_duals, to_duals), those with a negative
// reduced cost are added, and it is solved again, until none is left or
// time runs out.
//
// Every round gives a true lower bound on the whole problem, not only on
// the pairs it had: the duals' bound is recomputed with each edge's least
// reduced cost over all of its allowed pairs (weak duality holds for any
// dual vector), so a pair left out only weakens it. When no pair prices
// below zero, it is the LP optimum of the whole problem. The result reads
// as an LP solved on the whole problem: its reduced costs cover every pair,
// so reduced-cost fixing and the Pareto elimination may use it as well.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct PricingOptions {
  std::optional<std::chrono::steady_clock::time_point> deadline;  // no round starts after it; Clp stops at it (unset = none)
  int max_rounds = 12;                   // LP solves at most
  int64_t max_columns = 1'500'000;       // columns of one LP at most (LpOptions::max_columns)
  int64_t max_nonzeros = 64'000'000;     // memory-row coefficients at most (LpOptions::max_nonzeros; rows are added lazily)
  std::vector<Assignment> plans;         // plans whose pairs the first LP holds (e.g. the incumbent), so that it has an integral point
};

struct PricedLp {
  LpRelaxation lp;        // the last LP's solution, its reduced costs and bound over the whole problem (see above); outcome "optimal" only when no pair priced below zero
  int64_t best_bound = 0; // the highest bound over the rounds (lp.bound is the last round's)
  int rounds = 0;         // LP solves
  int64_t pairs = 0;      // pair columns in the last LP
  double ms = 0;          // wall time, milliseconds
};

PricedLp solve_lp_by_pricing(const Problem& problem, const PricingOptions& options = {});

}  // namespace shardsynth::synth
