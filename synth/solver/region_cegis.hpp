#pragma once
// Z3 as the large-neighbourhood engine. A connected region of the kernel is
// cut out around a seed node; everything outside keeps its strategy, so its
// edges into the region become the region's node costs and its usage a
// fixed profile. Within each stretch of slots where the region's own pieces
// do not change, the region's usage must fit what the fixed profile leaves:
// one pseudo-Boolean row per stretch that could bind. The counterexample
// loop then asks Z3 for a region assignment cheaper than the current one
// until it answers unsat (the region is optimal given the rest) or its
// resource limit runs out. Z3's resource limit (rlimit), not a timeout,
// bounds each check, so a run is repeatable.
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "synth/solver/local_search.hpp"

namespace shardsynth::synth {

// The most terms a region's encoding may hold (improve_region): the terms
// its edges' tables need over their classes (edge_classes.hpp) and the terms
// of its binding memory rows. Z3's encoding and the rows grow with them
// before Z3's resource limit counts anything: on the contest's S, one region
// of 35 nodes whose tables held 631,000 entries took the peak RSS from 0.3
// to 1.9 GB when each entry was encoded on its own.
constexpr long kMaxEncodedTerms = 400'000;

struct RegionOutcome {
  int nodes = 0;            // region size
  int checks = 0;           // Z3 checks made
  bool improved = false;    // the current assignment got cheaper
  bool proven = false;      // Z3 answered unsat: nothing in the region beats it
  bool too_large = false;   // its encoding would pass kMaxEncodedTerms: nothing was tried, the assignment is as it was
  int64_t cost = 0;         // kernel cost after the region search
};

// Grows a region of `size` nodes (or all of them) around `seed`: breadth
// first over the kernel graph, neighbours in `rng` order, going on from a
// random node outside when a component is used up.
std::vector<int> grow_region(const Problem& kernel, const std::vector<std::vector<Incidence>>& incidences, int seed, int size,
                             std::mt19937_64& rng);

// Z3's resource units for a region's checks: each one, and all of them
// together (0 = no limit).
struct RegionRlimit {
  unsigned per_check = 0;  // Z3 resource units one check may spend
  uint64_t total = 0;      // Z3 resource units the region's checks may spend together
};

// Runs the loop on `region` of the current assignment of `search`, which
// must keep the usage limit; every improvement is applied to `search`.
// `rlimit` bounds the checks (a check past the total is not made); at
// `deadline` (or on SIGINT) the check is interrupted.
RegionOutcome improve_region(LocalSearch& search, const std::vector<int>& region, RegionRlimit rlimit,
                             std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace shardsynth::synth
