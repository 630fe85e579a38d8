#pragma once
// Exact, usage-aware folding of a Problem into a smaller kernel, in passes
// that are linear in nodes and edges (up to the cost of rewriting tables).
// Unlike reduction.hpp it keeps every node's memory use under a usage limit,
// so it applies to problems whose limit binds:
//
//  - strategies forbidden by their own cost, or by a row (column) of an edge
//    table that is forbidden against every live strategy of the neighbour,
//    are dropped until nothing changes (arc consistency);
//  - parallel edges are summed into one table;
//  - a node left with one strategy is fixed: its cost joins the constant,
//    its edges become costs of its neighbours, its usage a base profile;
//  - a follower is folded into its leader: when every live strategy of the
//    leader allows exactly one live strategy of the follower, the follower's
//    strategy is a function of the leader's, so its cost and its edge table
//    join the leader's costs and its other edges become the leader's.
//
// Folding never looks at usages, so a kernel node carries the usage of every
// original node folded into it: one usage piece (a range of time slots and a
// usage per kernel strategy) per original node, coalesced by range.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// Memory held by one or more original nodes of a kernel node.
struct UsagePiece {
  int from = 0;                 // first time slot (index into FoldedProblem::slot_times)
  int to = 0;                   // one past the last time slot
  std::vector<int64_t> usages;  // per kernel strategy of the owning node: bytes while live
};

struct FoldedProblem {
  Problem kernel;                          // kernel nodes and edges (costs only: no usages, no intervals, no limit)
  std::vector<std::vector<UsagePiece>> pieces;  // per kernel node: its usage pieces, ascending by range
  std::vector<int64_t> slot_times;         // per time slot: the original time step it starts at (each distinct live_from)
  std::vector<int64_t> base;               // per time slot: bytes used by fixed nodes and by usage no choice changes
  std::optional<int64_t> usage_limit;      // the original problem's limit
  int64_t constant = 0;                    // original cost = constant + kernel cost, for every kernel assignment
  bool infeasible = false;                 // some node lost every strategy: no assignment is allowed at all

  // How to map a kernel assignment back.
  std::vector<int> root;                   // per original node: its kernel node, -1 when fixed
  std::vector<std::vector<int>> strategy_of;  // per original node: its strategy per strategy of its kernel node (one entry when fixed)

  int folded_followers = 0;                // statistics: followers folded into their leaders
  int fixed_nodes = 0;                     // statistics: nodes fixed to their only strategy
};

// Folds `problem`. Stops folding early (the result stays exact, only larger)
// when `deadline` passes.
FoldedProblem fold_problem(const Problem& problem,
                           std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
// The original assignment for a kernel assignment.
Assignment unfold(const FoldedProblem& folded, const Assignment& kernel_assignment);
// A kernel assignment that unfolds to `original` (an assignment of the
// folded problem) on every node that is not fixed; empty when there is
// none (some follower's strategy is not its leader's function of it).
Assignment fold_assignment(const FoldedProblem& folded, const Assignment& original);
// Per time slot, the usage of a kernel assignment (base included).
std::vector<int64_t> usage_profile_of(const FoldedProblem& folded, const Assignment& kernel_assignment);

}  // namespace shardsynth::synth
