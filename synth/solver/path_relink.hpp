#pragma once
// Path relinking between two kernel assignments of a folded problem: the
// assignments that take one of them on a prefix of the nodes (in index
// order) and the other on the rest, both ways round. Under a usage limit,
// the Lagrangian dual's decoded assignments often flip between a cheap one
// that breaks the limit and a dearer one that keeps it (memory_dual.hpp);
// the optimum mixes the two, and the cheapest mix that keeps the limit is
// a good start for a polish.
#include "synth/solver/folding.hpp"

namespace shardsynth::synth {

// The cheapest assignment (cost_without_usage) among the mixes of `a` and
// `b` that keeps the usage limit (every mix keeps it when there is none);
// `a` and `b` themselves are mixes. Empty when no mix keeps the limit or
// every mix is forbidden.
Assignment relink(const FoldedProblem& folded, const Assignment& a, const Assignment& b);

}  // namespace shardsynth::synth
