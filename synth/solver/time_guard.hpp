#pragma once
// Keeps --time-limit a promise even where Z3 does not. Z3 is interrupted at
// the deadline (z3_deadline.hpp), but some of its procedures do not look at
// the interrupt for a long time: a pseudo-Boolean check on GPT-2 xl's
// training problem ran 13 minutes past a 60 s limit. So a search with a time
// limit runs on a worker thread, and the caller waits for it until the
// deadline plus a short grace. A search that has not returned by then is
// abandoned: the caller gets the best plan and the lower bound published so
// far, labelled "time limit", and the worker finishes on its own, holding
// its own copy of the problem, with its callbacks cut off.
#include <chrono>
#include <cstdint>
#include <functional>

#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// How long after the deadline an unfinished search is abandoned.
inline constexpr std::chrono::milliseconds kAbandonGrace{400};

// A search that reports its steps, and each rise of its proven lower bound
// on the problem handed in.
using GuardedSearch = std::function<CegisResult(const Problem&, const CegisOptions&, const IterationCallback&,
                                                const BoundCallback&)>;

// Runs `search` on a worker thread; options.time_limit_s or
// options.deadline must be set. Returns its result when it ends within its
// deadline (search_deadline) plus kAbandonGrace,
// otherwise the best plan of the steps reported so far (sat steps that keep
// the usage limit) and the highest published bound. Rethrows what the
// search throws when it ends in time.
CegisResult run_within_time_limit(const Problem& problem, const CegisOptions& options,
                                  const IterationCallback& on_iteration, const GuardedSearch& search);

// Searches abandoned so far in this process, still running in Z3 or done.
// A program that saw one should leave with std::_Exit after flushing its
// output, so that no static destructor runs beside such a thread.
int abandoned_searches();

}  // namespace shardsynth::synth
