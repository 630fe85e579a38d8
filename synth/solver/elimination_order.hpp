// The order in which the Pareto elimination (pareto_elimination.hpp) removes
// nodes: min-fill, the usual heuristic for a small elimination width.
#pragma once

#include <vector>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// Every node of `p` once: repeatedly the node whose neighbours need the
// fewest new edges to become a clique (ties: fewer neighbours, lower id).
std::vector<int> elimination_order(const Problem& p);

}  // namespace shardsynth::synth
