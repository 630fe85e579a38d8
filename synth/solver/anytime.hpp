#pragma once
// The anytime search for large problems and binding usage limits: the
// problem is folded exactly (folding.hpp), then one or more Lagrangian
// searches (lagrangian_search.hpp) run side by side on the kernel, with
// different seeds. They run in epochs of a fixed number of rounds and
// exchange their best cost between epochs, so the plans reported depend
// only on the seed and the number of searches, unless the deadline cuts an
// epoch short. Where nothing but a restart passes into a search between
// epochs, the searches run ahead of the exchange on threads of their own
// (epoch_workers.hpp), with the same plans. Every plan is expanded to the original problem and scored
// there by `evaluate`. Given a start (a plan found elsewhere) that keeps
// the limit, only plans cheaper than it are reported and the result is
// never worse. The searches do not descend from it: on GPT-2 xl at 8 GB per
// device, searches that took a family's plan as their incumbent and Polyak
// target found nothing better in 2 runs of 3, where free searches found
// plans 7% cheaper (BENCHMARKS.md). Beside the searches, the memory dual
// (memory_dual.hpp) may run a fixed number of steps per epoch on a thread
// of its own; its bound counts after each epoch, so the bounds too depend
// only on the seed, the searches and the epochs run.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct AnytimeOptions {
  int threads = 1;                                                 // searches run side by side (one thread each)
  uint64_t seed = 1;                                               // the first search's seed; the others take the next ones
  std::optional<std::chrono::steady_clock::time_point> deadline;  // stop at this time
  long epoch_rounds = 1;                                           // rounds each search runs between exchanges
  long stall_rounds = 200;                                         // stop when no plan improved for this many rounds (0 = never)
  double stall_ratio = 0;                                          // with stall_rounds: stop only once the rounds without improvement are also at least this times the rounds run up to the last improvement (0 = stall_rounds alone)
  int64_t stall_below = 0;                                         // with stall_rounds: the stall rule applies only while the best plan costs at most this (0 = always), a cost of the problem
  int region_attempts = 4;                                         // Z3 region searches per round (region_cegis.hpp); 0 = none
  Assignment start;                                                // a plan of the problem found elsewhere, the plan to beat (empty = none)
  int64_t good_enough = 0;                                         // stop once the best plan costs at most this (0 = never), checked between epochs
  std::function<void(int64_t)> on_bound;                           // called with each rise of the lower bound (a cost of the problem), after the epoch that proved it (empty = none)
  int dual_max_kernel_nodes = 0;                                   // run the memory dual only on kernels of at most this many nodes (0 = any size)
  int dual_steps = 0;                                              // under a usage limit: steps of the memory dual (memory_dual.hpp) per epoch, on a thread of its own beside the searches (0 = none)
  bool dual_after_stall = false;                                   // the memory dual runs only from the first epoch in which the searches found no cheaper plan on
  int dual_patience = 0;                                           // the memory dual leaves for good after this many epochs in a row without a cheaper plan (0 = it stays)
  long max_rounds = 0;                                             // each search stops after this many rounds (0 = no such limit): stop_reason "rounds"
  int searches = 0;                                                // searches (seeds seed, seed + 1, ...), run on `threads` threads (0 = one per thread)
  long keep_after = 0;                                             // with more searches than threads: after this many rounds of each, only the `threads` searches with the cheapest own plans go on (0 = all go on)
  long restart_after = 0;                                          // a search whose own best has been dearer than the best plan for this many epochs in a row, and fell by less than its distance to it in them (falls_too_slowly), starts afresh with the next unused seed (0 = never)
  long relink_every = 0;                                           // every this many epochs, each search that lags the best plan is offered the cheapest mix of its incumbent and the best plan (path_relink.hpp), repaired and polished (0 = never)
  long adopt_after = 0;                                            // a search whose own best has been dearer than the best plan for this many epochs in a row takes the best plan as its incumbent (0 = never)
  int lead_epochs = 64;                                            // where nothing passes into a search between epochs but its restart (epoch_workers.hpp: no memory dual, adopting, relinking or keeping, one search per thread): epochs a search may run past the last one exchanged, the same plans without waiting for the slowest search (0 = lock-step)
};

// One improving plan, as it is found.
struct AnytimeStep {
  Assignment assignment;  // of the original problem
  int64_t cost = 0;       // evaluate(problem, assignment)
  double found_ms = 0;    // milliseconds since the search began
  int search = 0;         // which search found it (0-based)
  long round = 0;         // that search's round
  bool by_region = false; // found by Z3 on a region of the kernel, not by the priced descent and repair
};

struct AnytimeResult {
  Assignment best;                 // best assignment of the original problem (empty when none was found)
  int64_t best_cost = kForbidden;  // its cost
  int64_t lower_bound = 0;         // no assignment within the limit costs less
  bool infeasible = false;         // proven: folding left a node without any strategy
  bool proven_optimal = false;     // Z3 answered unsat below the best plan on the whole kernel
  std::string stop_reason;         // "time limit", "rounds" (AnytimeOptions::max_rounds), "stalled", "finished" (nothing left to price), "good enough" (AnytimeOptions::good_enough), "unsat" (proven) or "infeasible"
  int kernel_nodes = 0;            // after folding
  int kernel_edges = 0;            // after folding
  long rounds = 0;                 // rounds run, over all searches
  long restarts = 0;               // searches started afresh (AnytimeOptions::restart_after)
  double fold_ms = 0;              // milliseconds spent folding
};

using AnytimeCallback = std::function<void(const AnytimeStep&)>;

AnytimeResult anytime_search(const Problem& problem, const AnytimeOptions& options, const AnytimeCallback& on_step);

// Whether a search behind the best plan's cost `best` falls too slowly to
// catch it up (the restarts' rule): `history` holds its own best after
// each of the last epochs, oldest first (at least one), and over them it
// fell by less than it is still behind.
bool falls_too_slowly(const std::deque<int64_t>& history, int64_t best);

}  // namespace shardsynth::synth
