#pragma once
// A large-neighbourhood search on a cost network (network_search.hpp), as
// toulbar2's variable neighbourhood search does it: a region of the
// network's variables is searched exactly below the incumbent with every
// other variable kept at the incumbent's value, under a budget of work, and
// the next region follows. Soft arc consistency with the knapsack rows
// prunes inside the region, so regions of tens to hundreds of variables are
// searched whole. A region is a cluster grown breadth first over the
// network's edges from a random variable; every other one is two clusters
// of half the size, the second grown from a member of the row the
// incumbent fills most, so that memory can move between far parts of the
// graph. The size adapts: a quarter more after a region closed within the
// budget, a fifth less after one ran out of it. With several threads, each
// worker searches regions of its own stream and starts each one from the
// best plan any worker has found (BENCHMARKS.md, "Issue 32: regions of the
// cost network", two workers).
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "synth/solver/network_search.hpp"

namespace shardsynth::synth {

struct NetworkRegionOptions {
  std::optional<std::chrono::steady_clock::time_point> deadline;  // no region starts after it, and it cuts one short
  uint64_t seed = 1;                 // the regions' random stream
  long work_per_region = 10'000'000;  // values a region's search may scan (NetworkSearchOptions::max_work)
  int first_size = 24;               // variables of the first region
  int max_size = 600;                // the most variables a region grows to
  long max_regions = 0;              // regions at most (0: until the deadline)
  int threads = 1;                   // workers searching regions side by side, each from the best plan any has found (1: deterministic)
};

struct NetworkRegionRun {
  std::vector<std::pair<Assignment, int64_t>> plans;  // network plans with their scores, each cheaper than the last
  long regions = 0;                                   // regions searched
  long closed = 0;                                    // of them, searched whole within the budget
  int size = 0;                                       // the region size the first worker reached at the end
};

// The network of region `vars` (variables of `input`'s network) around
// `plan`: the region's variables with the edges to the others folded into
// their unary costs at `plan`'s values, and each row holding one of them
// with the room the others leave (rows that cannot overflow dropped,
// repeats merged). For every plan x that differs from `plan` only on
// `vars`, it fits the region's rows exactly when it fits `input`'s, and its
// score is the region's offset plus its region cost. Its score reads
// `input` (which must outlive it). For `input`s without row multipliers.
NetworkInput region_input(const NetworkInput& input, const Assignment& plan, const std::vector<int>& vars);

// From `plan` (a network plan scoring `incumbent`), regions searched in turn
// until the deadline (or max_regions); each cheaper plan becomes the
// incumbent the next regions start from. Nothing for inputs with row
// multipliers (penalized networks).
NetworkRegionRun search_network_regions(const NetworkInput& input, int64_t incumbent, Assignment plan,
                                        const NetworkRegionOptions& options);

}  // namespace shardsynth::synth
