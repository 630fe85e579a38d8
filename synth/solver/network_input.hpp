#pragma once
// The cost network of a problem under a usage limit, as the exact loop's
// network step searches it (network_search.hpp): the problem folded
// exactly (folding.hpp), its time slots as knapsack rows
// (knapsack_rows.hpp), penalized by the LP relaxation's row duals where
// there is one (row_penalties.hpp; the LP of the reduced kernel, each of
// its binding rows moved to the folded row of its time step), then
// reparameterized (dual_bound.hpp). Plans are scored on the problem itself.
#include <chrono>
#include <optional>
#include <vector>

#include "synth/solver/folding.hpp"
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/network_search.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// `problem` and `folded` (fold_problem(problem)) must outlive the result
// (its score reads them). `lp`: the relaxation of `kernel` (a kernel of
// `problem` whose nodes keep their intervals, e.g. reduce's), or null.
// The reparameterization stops sweeping at `deadline`.
NetworkInput network_input(const Problem& problem, const FoldedProblem& folded, const Problem& kernel,
                           const LpRelaxation* lp,
                           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

// Per row, the sum of the LP's duals of the binding rows whose time step
// (the latest start among their nodes in `kernel`) falls in it: the last
// row starting at or before it.
std::vector<double> duals_on_rows(const std::vector<KnapsackRow>& rows, const Problem& kernel, const LpRelaxation& lp);

}  // namespace shardsynth::synth
