#pragma once
// The anytime phase of run_cegis (cegis.hpp), before the exact loop: the
// start plans (CegisOptions::starts) scored as steps, then the anytime
// search (anytime.hpp), whose improving plans are steps too. A plan it
// proves optimal (Z3 on the whole kernel) ends the run, and so does its
// stop on a problem too large for the exact loop. On smaller problems it
// gets half of the time limit (or runs until it stalls), and its best plan
// becomes the exact loop's first incumbent.
#include <chrono>
#include <optional>

#include "synth/solver/exact_search.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// Runs the phase on `problem`, adding its steps to `result`. Where the
// exact loop follows and the options leave the choice to it (automatic),
// it first checks whether the limit binds at all, by the exact loop's
// reduction and lower-bound pass, kept in `prepared` for that loop.
// Each rise of the search's lower bound goes to `on_bound` as it is found.
// Returns whether the run is over.
bool run_anytime_phase(const Problem& problem, const CegisOptions& options,
                       std::optional<std::chrono::steady_clock::time_point> deadline,
                       const IterationCallback& on_iteration, const BoundCallback& on_bound, CegisResult& result,
                       std::optional<PreparedKernel>& prepared);

}  // namespace shardsynth::synth
