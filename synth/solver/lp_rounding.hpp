#pragma once
// A plan rounded from the LP relaxation (lp_relaxation.hpp): the primal side
// of the LP. The problem is folded exactly (folding.hpp); each kernel node
// takes the strategy whose original strategies hold the most LP weight
// (their x summed over the nodes folded into it); then nodes at time slots
// over the usage limit move to strategies that use less there, cheapest per
// byte freed (LocalSearch::repair), and single-node moves that keep the
// limit descend from there (LocalSearch::descend). Deterministic: no random
// moves.
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// A rounded plan of `problem`, the problem `lp` was solved on, that keeps
// the usage limit; empty when `lp` has no solution or the repair cannot
// reach the limit.
Assignment round_lp(const Problem& problem, const LpRelaxation& lp);

}  // namespace shardsynth::synth
