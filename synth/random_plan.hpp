#pragma once
// Random legal plans: a seeded draw of one strategy for every node of a
// lowered problem, so that sweeps can hold the runtime to the cost model over
// the whole plan space the solver searches, not only at its optimum
// (`synth --plan random --seed N`, tests/e2e/plan_sweep_main.cpp).
//
// The draw visits the problem's nodes in order (the graph's topological
// order) and picks each one's strategy uniformly among those that are
// allowed (not forbidden by a plan family, a pin or the cost model) and
// legal with every neighbour already drawn (no forbidden edge pair). A dead
// end, where no strategy is left, restarts the draw with the generator's next
// numbers; so does a plan over the problem's usage limit (--memory). The
// generator is splitmix64 and the order is fixed, so the same seed and
// problem give the same plan on every machine.
//
// Shrinking: when a plan fails a check, shrink_plan resets its nodes to the
// all-replicated strategy one at a time, in problem order (a follower moving
// with its leader, synth/followers.hpp), keeping each reset after which the
// plan is still legal and still fails. What is left sharded
// names the tensors whose resharding is wrong.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "synth/lowering.hpp"

namespace shardsynth::synth {

// Draws that may dead-end or exceed the usage limit before random_assignment gives up.
inline constexpr int kRandomPlanDraws = 1000;

// A random legal assignment (see above). Throws ir::InputError naming the
// seed when kRandomPlanDraws draws found none (no legal plan, or none under
// the memory budget).
Assignment random_assignment(const Lowered& lowered, uint64_t seed);

// The strategy of problem node `node` that keeps its tensors whole: output,
// result and every operand replicated. -1 when it has none that is allowed.
int replicated_strategy(const Lowered& lowered, int node);

// Whether an assignment still fails; called with legal assignments only.
using PlanFails = std::function<bool(const Assignment& assignment)>;

// `failing` reduced as the header says. `failing` itself is not re-checked.
Assignment shrink_plan(const Lowered& lowered, const Assignment& failing, const PlanFails& fails);

// One line per problem node that an assignment does not keep replicated, in
// problem order and spec text: "name: OUTPUT (computed as RESULT) reading
// OPERAND, ..." (operands: tensor inputs, then parameters; the "computed as"
// part only when the op resolves a partial result).
std::vector<std::string> sharded_nodes(const Lowered& lowered, const Assignment& assignment);

}  // namespace shardsynth::synth
