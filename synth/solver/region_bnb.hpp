#pragma once
// A propagating branch and bound on a region of the incumbent: the primal
// twin of region_cegis.hpp, without Z3. The region's nodes are free, the
// rest keeps its strategies, so edges to fixed nodes become unary costs,
// and each stretch of slots where the region's pieces do not change is one
// memory row (the room the fixed nodes leave there). Before the search:
//  - values forbidden by a fixed neighbour, or too heavy for a row even
//    with every other region node at its lightest, are dropped, and the
//    forbidden pairs of the region's own edges are made arc consistent;
//  - messages pass over the region's edges (a few TRW-S sweeps), then
//    every region edge is projected onto its ends (row minima to one end,
//    then column minima to the other), so its residual costs are at least
//    zero: a reparameterization, exact for every assignment, after which
//    each variable's cheapest value accounts for the region as a whole
//    rather than for its own edges alone.
// The depth-first search takes the variable with the fewest values left,
// its values cheapest first. An assignment adds its edges' residual costs
// to the neighbours' values and drops the neighbours' values forbidden
// against it (forward checking); a value is tried only when the rows keep
// room for it. A node is cut when its cost so far plus each free
// variable's cheapest value reaches the best region cost (at first the
// incumbent's). The budget counts the values scanned in choosing
// variables and in forward checking and the rows checked, so results are
// repeatable and a search costs about the same time whether its domains
// are wide or its nodes in many rows; the deadline only cuts a search short.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "synth/solver/local_search.hpp"

namespace shardsynth::synth {

struct BnbOutcome {
  int nodes = 0;          // region size
  long visits = 0;        // search nodes visited
  long work = 0;          // values scanned in choosing variables and forward checking, plus row memberships checked (the budget's unit)
  bool improved = false;  // the incumbent got cheaper (the region's best plan was applied)
  bool proven = false;    // the search finished: no region assignment beats the result
  int64_t cost = 0;       // kernel cost after the search
  int64_t root_bound = 0;  // lower bound on the region's cost (its nodes and the edges touching them) before branching, without the memory rows
};

// Runs the search on `region` of `search`'s current assignment, which must
// keep the usage limit; the best region assignment found is applied to
// `search`. Stops once `max_work` values were scanned (0 = no limit), at
// `deadline` or on SIGINT.
BnbOutcome solve_region_bnb(LocalSearch& search, const std::vector<int>& region, long max_work,
                            std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace shardsynth::synth
