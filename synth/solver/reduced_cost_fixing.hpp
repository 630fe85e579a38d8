#pragma once
// LP-based reduced-cost fixing, the standard use of an LP in branch and
// bound. With the LP's bound L (from its duals) and reduced costs d, every
// assignment x costs at least L plus, per node and per edge, how far the
// reduced cost of x's choice lies above that node's or edge's least one.
// So an assignment that picks strategy s at node v costs at least
// L + (d[v][s] - min d[v]) + sum over v's edges of (the least reduced cost
// of a pair with s - that edge's least one), and one that picks the pair
// (s, t) at edge e at least L + (d[e][s,t] - min d[e]) + the same for s and t
// at e's ends. A strategy or pair whose bound reaches the incumbent's cost
// is in no cheaper assignment: forbidding it keeps every assignment cheaper
// than the incumbent, at its cost, so the reductions (reduction.hpp) may
// then drop it, and Z3's unsat below the incumbent still proves it optimal.
#include <cstdint>

#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct FixingCount {
  int64_t strategies = 0;  // strategies forbidden
  int64_t pairs = 0;       // edge pairs forbidden (besides those of forbidden strategies)
};

// Forbids (kForbidden) in `problem`, the problem `lp` was solved on, every
// allowed strategy and pair whose reduced-cost bound is at least
// `incumbent` (a cost of `problem`). Does nothing when `lp` has no duals.
FixingCount fix_by_reduced_cost(Problem& problem, const LpRelaxation& lp, int64_t incumbent);

}  // namespace shardsynth::synth
