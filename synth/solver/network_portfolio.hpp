#pragma once
// Several cost networks of one problem (network_input.hpp: with and
// without the LP's row duals as penalties) searched side by side below one
// incumbent. Neither network is the faster one everywhere: searched below
// the optimum + 0.1%, the penalized one closed s816-t in 228M values where
// the plain one was open after 34e9, and B-t101 in 2.2M against 15e9, but
// took 2.9e9 on d816-t, where the plain one closed in 0.35e9
// (BENCHMARKS.md, "Issue 32: two networks side by side").
//
// The race is decided by work, not time, so the outcome does not depend on
// the threads: the member that closes with the least work wins (ties: the
// lower index), and a member stops as soon as its work shows it cannot win.
// With one thread the members run one after the other under the same rule,
// so the winner and its plans are the same; a deadline then gives each
// member an equal share of the time left.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "synth/solver/network_search.hpp"

namespace shardsynth::synth {

// What the portfolio found.
struct PortfolioRun {
  NetworkSearch found;                                 // the winner's search; when none closed: the counts summed, the best plan and the highest root bound
  std::vector<std::pair<Assignment, int64_t>> plans;   // network plans with their scores, in the order reported: each cheaper than the last
  int winner = -1;                                     // index of the member whose search closed and won (-1: none closed)
};

// Searches each of `inputs` (networks of the same folded kernel, scored
// alike) below `incumbent` from `hint`, under `options` (each member gets
// the whole work budget), with climbing cutoffs when `climb`
// (network_cutoffs.hpp), on up to `threads` threads. When a member
// closes, its plans are the result's; when none does, the plans of all
// members, merged by falling cost.
PortfolioRun search_portfolio(const std::vector<const NetworkInput*>& inputs, int64_t incumbent, const Assignment& hint,
                              const NetworkSearchOptions& options, bool climb, int threads);

}  // namespace shardsynth::synth
