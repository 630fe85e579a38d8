#pragma once
// Exhaustive search over every assignment: the oracle that tests check the
// solver against on small problems.
#include <cstdint>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct BruteForceResult {
  Assignment best;          // first cheapest assignment in odometer order; empty when none is feasible
  int64_t cost = kForbidden;  // its cost; kForbidden when none is feasible
  int64_t visited = 0;      // assignments evaluated
};

// Throws std::invalid_argument when the search space exceeds `limit` assignments.
BruteForceResult brute_force(const Problem& problem, int64_t limit = 10'000'000);

}  // namespace shardsynth::synth
