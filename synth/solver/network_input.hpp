#pragma once
// The cost network of a problem under a usage limit, as the exact loop's
// network step searches it (network_search.hpp): the problem folded
// exactly (folding.hpp), its time slots as knapsack rows
// (knapsack_rows.hpp), penalized by the LP relaxation's row duals where
// there is one (row_penalties.hpp; the LP of the reduced kernel, each of
// its binding rows moved to the folded row of its time step), then
// reparameterized (dual_bound.hpp). Plans are scored on the problem itself.
#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "synth/solver/folding.hpp"
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/network_regions.hpp"
#include "synth/solver/network_search.hpp"
#include "synth/solver/problem.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// `problem` and `folded` (fold_problem(problem)) must outlive the result
// (its score reads them). `lp`: the relaxation of `kernel` (a kernel of
// `problem` whose nodes keep their intervals, e.g. reduce's), or null.
// The reparameterization stops sweeping at `deadline`.
NetworkInput network_input(const Problem& problem, const FoldedProblem& folded, const Problem& kernel,
                           const LpRelaxation* lp,
                           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

// The folded kernel itself as a network, with its time slots as rows and
// no reparameterization (which took 2 of the 3.7 s that network_input
// takes on d10k-a's 4,482 variables): for regions of it
// (network_regions.hpp), whose searches propagate their own small
// networks. `problem` and `folded` must outlive it. Its entries are the
// kernel's costs, so at least 0 where the problem's are.
NetworkInput plain_network_input(const Problem& problem, const FoldedProblem& folded);

// Folded kernels larger than this are left to the other steps: the search's
// nodes cost time linear in the kernel.
inline constexpr std::size_t kNetworkMaxVariables = 2'000;
// Before the anytime search, the step runs only on folded kernels up to this
// size: it closes small tight ones there (s816-t, 375 variables), while on
// the development set's 3,000-node problems (about 1,350 variables, 1,780
// rows) it never closed and its second of folding, reparameterizing and
// searching came out of the anytime search's time (d3k-t, 20 s, seed 1:
// 902,282,459 against 901,420,503 without it).
inline constexpr std::size_t kNetworkFirstMaxVariables = 1'000;

// One search of a problem's cost network: its plans (of `problem`, in the
// order found, each cheaper than the last) and its outcome.
struct NetworkRun {
  std::vector<std::pair<Assignment, int64_t>> plans;  // each plan found and its cost
  NetworkSearch found;                                // the search's outcome, bounds and counts
  double prepare_ms = 0;                              // folding, rows, penalties and reparameterization, milliseconds
};

// Folds `problem`, builds its network (network_input) and searches it below
// `incumbent` (a cost of `problem`; kForbidden = none), `hint` (a plan of
// `problem`, or empty) ordering the values, until it has scanned `work`
// values (NetworkSearchOptions::max_work) or `deadline` passes; with
// `climb`, under climbing cutoffs (network_cutoffs.hpp). Where `lp` has
// row duals, the network penalized by them and the plain one race, on up
// to `threads` threads (network_portfolio.hpp: the outcome does not depend
// on the threads). With `regions`, regions of the (first) network are
// searched first from `hint` (network_regions.hpp), and the search starts
// from their best plan; their plans come first in the run's. Unset when
// the folded kernel has more than `max_variables` variables or folding
// finds no plan at all.
std::optional<NetworkRun> run_network_search(const Problem& problem, const Problem& kernel, const LpRelaxation* lp,
                                             int64_t incumbent, const Assignment& hint, long work,
                                             std::size_t max_variables,
                                             std::optional<std::chrono::steady_clock::time_point> deadline, bool climb,
                                             int threads,
                                             const std::optional<NetworkRegionOptions>& regions = std::nullopt);

// The step of `run`'s `k`-th plan (moved out of it), asked below `below`
// (unset: no incumbent): source "network", sat, its cost by evaluate() on
// `problem`, which must equal the search's score (EvaluatorMismatch
// otherwise). The first plan's step carries the preparation's time.
Iteration network_plan_step(const Problem& problem, NetworkRun& run, std::size_t k, std::optional<int64_t> below);

// The search's own step, asked below `below` (the best cost after its
// plans): unsat when it closed (no plan below it), else unknown.
Iteration network_search_step(const NetworkRun& run, std::optional<int64_t> below);

// Per row, the sum of the LP's duals of the binding rows whose time step
// (the latest start among their nodes in `kernel`) falls in it: the last
// row starting at or before it.
std::vector<double> duals_on_rows(const std::vector<KnapsackRow>& rows, const Problem& kernel, const LpRelaxation& lp);

}  // namespace shardsynth::synth
