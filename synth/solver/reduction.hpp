#pragma once
// Exact reductions of a plain Problem before Z3 sees it. Each keeps the
// optimum equal to the original's, and `expand` maps a kernel assignment back
// to an original one whose cost is exactly the kernel's cost plus `constant`.
//
//  - forbidden strategies (their own cost, or a row forbidden against every
//    strategy of a neighbour) are dropped, until nothing changes;
//  - dominated strategies (no cheaper in any term than another strategy of
//    the same node, usage included) are dropped;
//  - parallel edges are merged by summing their tables;
//  - a node with one strategy is folded into its neighbours' costs;
//  - a leaf (one neighbour) is eliminated: its neighbour's cost gains the
//    min over the leaf's strategies (a min-plus product);
//  - a degree-2 node is eliminated: a new edge between its two neighbours
//    holds the min-plus product of its two edge tables;
//  - an isolated node keeps its cheapest strategy.
// With a usage limit, only the first three apply (eliminating a node would
// hide its usage from the limit).
#include <cstdint>
#include <vector>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// One eliminated node and how to pick its strategy back.
struct Elimination {
  int node = 0;                 // original node index
  std::vector<int> neighbours;  // original indices of the 0, 1 or 2 neighbours it depended on
  std::vector<int> choice;      // original strategy, indexed by the neighbours' original strategies (row-major)
  std::vector<int> neighbour_sizes;  // original strategy counts of the neighbours, for indexing `choice`
};

struct Reduced {
  Problem kernel;                        // what Z3 solves
  std::vector<int> kernel_of;            // per original node: kernel node index, -1 when eliminated
  std::vector<std::vector<int>> strategy_of;  // per kernel node: original strategy index of each kernel strategy
  std::vector<Elimination> eliminated;   // in elimination order
  int64_t constant = 0;                  // cost of eliminated parts not carried by the kernel

  // Statistics for logs and benchmarks.
  int dropped_strategies = 0;  // forbidden or dominated strategies removed
};

Reduced reduce(const Problem& problem);
// The problem itself as its own kernel, with nothing eliminated (`--no-reduce`).
Reduced identity_reduction(const Problem& problem);
// The original assignment for a kernel assignment.
Assignment expand(const Reduced& reduced, const Assignment& kernel_assignment);

}  // namespace shardsynth::synth
