#pragma once
// The counterexample-guided loop of the Slapo PR: ask Z3 for an assignment
// cheaper than the best so far, score it with the C++ evaluator (which must
// agree with Z3's value of the cost term), tighten the bound, and stop when
// Z3 answers unsat: the best assignment is then proven optimal.
//
// Before Z3 sees the problem it is reduced exactly (reduction.hpp), its costs
// are reparameterized to expose a lower bound (dual_bound.hpp), and a decoded
// assignment becomes the first incumbent; every strategy and pair that alone
// exceeds the gap between the two is pruned, and the pruned problem is
// reduced again. Z3 then answers "anything cheaper than the incumbent?" on
// what is left. On request, a problem with a usage limit is first solved
// without it: when that optimum fits the limit it is the optimum. Where
// the anytime search runs (the limit binds), plans to start from are asked
// for first and scored as steps: each allowed one cheaper than those before
// it. The cheapest is the plan the anytime search must beat and the exact
// loop's first incumbent, so the result is never worse.
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// Runs the loop; every model is expanded back to an assignment of `problem`
// and scored there, and that score must equal Z3's value of the cost term
// plus the reductions' constants. Iterations report assignments of
// `problem`. Throws common::InputError when no assignment is feasible, and
// SolverError when Z3 itself fails (its z3::exception translated). With a
// time limit it returns within the limit plus time_guard.hpp's grace, even
// when a Z3 check ignores its interrupt.
CegisResult run_cegis(const Problem& problem, const CegisOptions& options, const IterationCallback& on_iteration);

}  // namespace shardsynth::synth
