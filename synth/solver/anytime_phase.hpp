#pragma once
// The anytime phase of run_cegis (cegis.hpp), before the exact loop: the
// start plans (CegisOptions::starts) scored as steps, then the anytime
// search (anytime.hpp), whose improving plans are steps too. A plan it
// proves optimal (Z3 on the whole kernel) ends the run, and so does its
// stop where the exact loop does not follow (after_anytime). Elsewhere it
// gets at most half of the time limit and stops sooner when it stalls
// (anytime_options in anytime_phase.cpp), and its best plan
// becomes the exact loop's first incumbent.
#include <chrono>
#include <optional>

#include "synth/solver/exact_search.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// What follows the anytime search on `problem`.
enum class AfterAnytime {
  exact_loop,    // the exact loop: up to kExactLoopMaxNodes nodes, and under a time limit only where the problem folds to at most kNetworkFirstMaxVariables
  network_step,  // under a time limit, beyond that, where it folds to at most kNetworkMaxVariables and has a usage limit: search_network_after_anytime
  regions_step,  // the same, where it folds to more, up to kRegionsMaxVariables: search_regions_after_anytime
  nothing,       // the anytime search is the whole search
};

// Under a time limit (`deadline`) the exact loop follows only where its
// proof is within reach: the problem folded exactly (folding.hpp, a few
// milliseconds; 0.17 s on the contest's largest) has at most
// kNetworkFirstMaxVariables variables, as on every problem it has proven
// in a contest minute (d816-t: 384; h1k: 681). Beyond, its set-up before
// the anytime search (TRW-S, the LP and the Pareto elimination: 36 of 60 s
// on the 3,000-node development problems and the holdout's h3k9,
// 1,332-1,772 variables) left the searches 11-20 s, and it proved nothing
// after them; the searches given the minute were cheaper on all three.
// There, and on larger problems that fold small (the contest's A: 34,932
// nodes, 285 variables), the cost network's search follows instead, from
// the searches' best plan (BENCHMARKS.md, "Issue 32: the minute beyond the
// proof's reach").
AfterAnytime after_anytime(const Problem& problem, std::optional<std::chrono::steady_clock::time_point> deadline);

// Runs the phase on `problem`, adding its steps to `result`. Where the
// exact loop follows and the options leave the choice to it (automatic),
// it first checks whether the limit binds at all, by the exact loop's
// reduction and lower-bound pass, kept in `prepared` for that loop.
// Each rise of the lower bound on `problem` goes to `on_bound` as it is
// proven, not only at the end. Returns whether the run is over.
bool run_anytime_phase(const Problem& problem, const CegisOptions& options,
                       std::optional<std::chrono::steady_clock::time_point> deadline,
                       const IterationCallback& on_iteration, const BoundCallback& on_bound, CegisResult& result,
                       std::optional<PreparedKernel>& prepared);

}  // namespace shardsynth::synth
