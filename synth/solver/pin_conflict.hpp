#pragma once
// Whether restrictions of single nodes to some of their strategies can hold
// together on a plain Problem, and if not, which of them conflict: one Z3
// check of the problem (one-hot encoding: its forbidden choices and usage
// rows) with one assumption literal per restriction, then the unsat core over
// those literals, shrunk by deletion until every restriction in it is needed.
// The user pins of synth/pins.hpp resolve to such restrictions.
#include <vector>

#include "synth/solver/problem.hpp"
#include "synth/solver/solver_error.hpp"

namespace shardsynth::synth {

// One pin as a constraint on one problem node.
struct ResolvedPin {
  int node = 0;              // problem node whose strategy decides the tensor's spec
  std::vector<bool> allows;  // per strategy of that node: whether it agrees with the pin
};

// Indices into `pins` of a conflict: a subset no assignment of the problem
// satisfies, shrunk by deletion until dropping any one pin makes it
// satisfiable, in ascending order. Empty when all the pins can hold
// together. Throws common::InputError when the problem has no plan even
// without pins or Z3 answers unknown, and SolverError when Z3 itself fails.
std::vector<int> conflicting_pins(const Problem& problem, const std::vector<ResolvedPin>& pins);

}  // namespace shardsynth::synth
