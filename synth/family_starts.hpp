#pragma once
// The expert plan families (plans.hpp) as starting points of the search for
// the optimum under a memory budget.
//
// Under a binding budget the Lagrangian search (solver/anytime.hpp) explores
// the whole space of plans, and it can take long to reach what a family's
// structure reaches at once: on GPT-2 xl at 12 GB per device its 30 s plan
// was more costly than the best Megatron plan under the same budget
// (BENCHMARKS.md). So before that search each family's restriction of the
// lowered problem (restrict_problem: the same nodes, strategies and edges,
// with the family's other strategies forbidden) is searched briefly. Each
// family's best plan is also a plan of the whole problem; the whole search
// starts from the cheapest, scores every one as a step of its trace
// (source "plan:NAME"), and so never ends worse than any family's plan.
// Families are tried in plan_names() order; one that forbids exactly what
// an earlier one forbids, or whose least reachable peak is over the budget,
// is skipped.
#include <chrono>
#include <optional>
#include <vector>

#include "synth/lowering.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

struct FamilyStartOptions {
  double share = 0.2;       // of the time left to the deadline, spent on all families together
  long stall_rounds = 16;   // a family's search ends after this many rounds without a better plan
  int threads = 1;          // searches side by side per family (CegisOptions::threads)
  uint64_t seed = 1;        // the searches' first seed (CegisOptions::seed)
  std::optional<std::chrono::steady_clock::time_point> deadline;  // the whole search's deadline; unset = none
};

// One start plan per family that found a plan within its share of the time,
// in plan_names() order. Empty without a usage limit.
std::vector<StartPlan> family_starts(const Lowered& lowered, const FamilyStartOptions& options);

}  // namespace shardsynth::synth
