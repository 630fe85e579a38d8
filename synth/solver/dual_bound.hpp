#pragma once
// A lower bound on a Problem's optimum by reparameterization (sequential
// tree-reweighted message passing, TRW-S, in integer arithmetic), and the
// pruning it licenses.
//
// Reparameterizing moves cost between an edge's table and its end nodes'
// costs so that every assignment keeps exactly its total. Once every node
// and edge table has minimum 0, the moved-out constant is a lower bound on
// the optimum, and any single strategy or pair whose remaining cost reaches
// the gap (best known cost minus that bound) cannot appear in an assignment
// cheaper than the best known. Both steps are exact: the pruned problem
// still holds every assignment cheaper than the best known, at its cost.
#include <chrono>
#include <cstdint>
#include <optional>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct DualBound {
  Problem problem;        // same nodes, strategies, edges and usages; costs reparameterized, every table's minimum 0
  int64_t constant = 0;   // cost(x) = constant + reparameterized cost(x) for every x: a lower bound on the optimum
  Assignment primal;      // best assignment decoded during the passes (empty when none was feasible)
  int64_t primal_cost = kForbidden;  // its cost in the input problem (it keeps the usage limit)
  int passes = 0;         // message-passing sweeps run (forward and backward count one each)
};

struct DualOptions {
  int max_passes = 1000;  // sweeps at most (the bound on the IOPDDL problems still rises after 400)
  int stall_passes = 8;   // stop when the bound has not risen for this many sweeps
  std::optional<std::chrono::steady_clock::time_point> deadline;  // stop sweeping at this time
  bool decode = true;     // decode and polish assignments (`primal`); off when only the bound is wanted
  int decode_first = 4;   // decode after each of the first sweeps, this many
  int decode_every = 16;  // then after every this-many-th sweep, and after the last one
};

DualBound reparameterize(const Problem& problem, const DualOptions& options = {});

// Forbids (kForbidden) every strategy and pair whose cost in a reparameterized
// problem (all minima 0, as `reparameterize` leaves it) alone reaches `gap`,
// and every strategy whose cost plus its cheapest pair on each incident edge
// reaches it. The result holds exactly the assignments of reparameterized
// cost below `gap`, among others. `pruned` counts what was forbidden.
Problem prune_at_gap(const Problem& reparameterized, int64_t gap, int64_t* pruned = nullptr);

}  // namespace shardsynth::synth
