#pragma once
// The exact dynamic program over cut points: given boundaries b_0 < ... < b_m
// (b_0 the first position, b_m one past the last, the others candidate
// cuts) and the time of every stage [b_i, b_j), choose S - 1 cuts that
// minimize the bottleneck (the largest stage time), then, among those, the
// sum of stage times (what the pipeline's fill and drain cost); remaining
// ties go to the earliest predecessor cut, so the answer is deterministic.
#include <cstdint>
#include <functional>
#include <vector>

namespace shardsynth::synth {

struct CutChoice {
  std::vector<int> cuts;    // chosen boundary indices (into the boundaries), ascending; S - 1 of them
  int64_t bottleneck = 0;   // largest stage time; kForbidden when no choice is feasible
  int64_t total = 0;        // sum of stage times
};

// time(i, j): stage time of [b_i, b_j) for 0 <= i < j <= m, kForbidden when
// infeasible. Asks every pair once.
CutChoice best_cuts(int boundaries, int stages, const std::function<int64_t(int, int)>& time);

}  // namespace shardsynth::synth
