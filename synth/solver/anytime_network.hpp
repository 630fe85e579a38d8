#pragma once
// The cost network's step after the anytime search, where the exact loop
// does not follow (exact_loop_follows in anytime_phase.hpp) but the
// problem folds to a kernel the network search can hold
// (kNetworkMaxVariables): the searches' best plan is the incumbent and the
// hint, and the network's branch and bound (network_search.hpp; no LP:
// the rows' multipliers start at zero and move by the search's own
// Lagrangian steps) looks for cheaper plans until the deadline. Before it,
// for kRegionsShare quarters of the step's time, regions of the network
// are searched exactly with the rest of the plan fixed
// (network_regions.hpp), each cheaper plan the next regions' start: on the
// development set's 3,000-node problems and the holdout's h3k9 they found
// plans 0.2-1.8% cheaper than the searches' best in seconds, where the
// whole network's branch and bound found few (BENCHMARKS.md, "Issue 32:
// regions of the cost network"). Each plan is a step (source "network", sat). Its root's floor bounds every plan
// cheaper than the incumbent, so the lower bound rises to it; when the
// search closes, nothing is cheaper than the best plan, and the step says
// so (unsat) and the bound rises to the best cost. That is not Z3's unsat:
// the problem is too large for the exact loop's Z3 check, so the run is not
// called proven (CegisResult::proven_optimal stays false), its gap is 0.
#include <chrono>
#include <cstddef>
#include <optional>

#include "synth/solver/problem.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// Quarters of the step's time that go to the regions; the whole network's
// search has the rest, and closes where it can (the contest's A: in 5-6 s
// below the searches' plan).
inline constexpr int kRegionsShare = 3;

// Where the problem folds to more than kNetworkMaxVariables variables, up
// to kRegionsMaxVariables, and its rows take at most kRegionsMaxRowBytes
// (rows_bytes_bound): the regions alone, on the folded kernel without
// reparameterization (plain_network_input), until the deadline; each
// cheaper plan is a step (source "network", sat). The whole network's
// search does not follow: on kernels this large it found nothing and its
// set-up cost memory (d10k-a, 4,482 variables: 812 MB against 166 MB).
// The rows' bound keeps the peak under 2 GB: the contest's M (bound
// 3.1 GB) and S (5.5 GB) peaked at 2.6 and 4.1 GB with the regions, and
// d10k-a (347 MB) at 576 MB.
inline constexpr std::size_t kRegionsMaxVariables = 8'000;
inline constexpr std::size_t kRegionsMaxRowBytes = 600'000'000;

// Runs the regions alone on `problem` below `result`'s best plan (none:
// nothing to do), adding their steps to `result` and publishing them.
void search_regions_after_anytime(const Problem& problem, const CegisOptions& options,
                                  std::optional<std::chrono::steady_clock::time_point> deadline,
                                  const IterationCallback& on_iteration, CegisResult& result);

// Runs the step on `problem` below `result`'s best plan (none: nothing to
// do), adding its steps and bound to `result` and publishing them.
void search_network_after_anytime(const Problem& problem, const CegisOptions& options,
                                  std::optional<std::chrono::steady_clock::time_point> deadline,
                                  const IterationCallback& on_iteration, const BoundCallback& on_bound,
                                  CegisResult& result);

}  // namespace shardsynth::synth
