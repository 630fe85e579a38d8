#pragma once
// Memory limits as knapsack rows over a network's variables: at one time
// step, each member's usage depends on its value, and together the members
// may use at most a capacity (the limit less what no choice changes).
// Built from a folded problem's time slots.
#include <cstdint>
#include <vector>

#include "synth/solver/folding.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct KnapsackRow {
  std::vector<int> vars;                      // member variables, ascending
  std::vector<std::vector<int64_t>> weights;  // per member: bytes per value
  int64_t capacity = 0;                       // bytes the members may use together
  int64_t step = 0;                           // the time step the row checks (a live_from of the problem)
};

// One row per time slot of the folded kernel whose heaviest values exceed
// the limit, minus rows whose members and weights repeat the previous
// slot's with no more room; none without a limit.
std::vector<KnapsackRow> rows_of_folded(const FoldedProblem& folded);

// An upper bound on the bytes of rows_of_folded(folded), found by the same
// sweep without building the rows: every slot where a piece starts or
// ends counted as a row of all the members live there (no merging, no
// dropping), each member's weights (8 bytes a value) and its vector (a
// pointer triple and the allocator's header, 40 bytes). Linear in the
// pieces and slots.
std::size_t rows_bytes_bound(const FoldedProblem& folded);

}  // namespace shardsynth::synth
