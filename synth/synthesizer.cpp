#include "synth/synthesizer.hpp"

#include "synth/solver/cegis.hpp"

#include <chrono>

#include "ir/error.hpp"
#include "synth/family_starts.hpp"
#include "synth/memory_figures.hpp"
#include "synth/random_plan.hpp"
#include "synth/schedule_builder.hpp"

namespace shardsynth::synth {

CegisResult solve_problem(const Problem& problem, const CegisOptions& options, const IterationCallback& on_iteration) {
  return run_cegis(problem, options, on_iteration);
}

SynthResult synthesize(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                       const SynthOptions& options, const SynthCallback& on_iteration) {
  SynthResult result{lower(graph, mesh, model, options.lower), {}, {}};
  result.lowered.problem.name = "graph";
  apply_pins(result.lowered, options.pins);
  const Problem& problem = result.lowered.problem;
  // A budget below what every plan needs, or that no plan meets: one labelled line.
  auto no_plan_fits = [&] {
    const UsagePeak least = least_peak(problem);
    return ir::InputError("no plan fits in " + std::to_string(*problem.usage_limit) +
                          " bytes per device: every plan needs at least " + std::to_string(least.bytes) +
                          " (time step " + std::to_string(least.step) + ", " + step_name(result.lowered, least.step) + ")");
  };
  if (problem.usage_limit && least_peak(problem).bytes > *problem.usage_limit) throw no_plan_fits();
  CegisOptions cegis = options.cegis;
  if (options.family_starts && problem.usage_limit && !options.lower.allow) {
    // Asked for only where the limit binds and the anytime search runs. It
    // refers to `result.lowered`: it is called, and ends within a fifth of
    // the time left, before the first Z3 check that a time guard could
    // abandon past this call's end.
    FamilyStartOptions families;
    families.threads = cegis.threads;
    families.seed = cegis.seed;
    cegis.starts = [&result, families](std::optional<std::chrono::steady_clock::time_point> deadline) mutable {
      families.deadline = deadline;
      return family_starts(result.lowered, families);
    };
  }
  try {
    result.search = run_cegis(problem, cegis, [&](const Iteration& it) {
      if (on_iteration) on_iteration(result.lowered, it);
    });
  } catch (const ir::InputError&) {
    if (problem.usage_limit) throw no_plan_fits();
    throw;
  }
  if (result.search.best.empty()) throw NoPlanError("no plan found before the search stopped (" + result.search.stop_reason + ")");
  result.schedule = build_schedule(result.lowered, result.search.best, model.name(), result.search.best_cost,
                                   result.search.proven_optimal);
  return result;
}

namespace {

// A result holding one plan that was not searched for: scored by the
// evaluator and written by the schedule builder, like any plan.
SynthResult single_plan(Lowered lowered, const Assignment& assignment, const costs::CostModel& model,
                        const std::string& reason) {
  SynthResult result{std::move(lowered), {}, {}};
  Iteration it;
  it.status = CheckStatus::sat;
  it.assignment = assignment;
  it.cost = evaluate(result.lowered.problem, it.assignment);
  if (it.cost >= kForbidden) throw ir::InputError("the schedule is forbidden under these options (e.g. over the memory budget)");
  result.search.best = it.assignment;
  result.search.best_cost = it.cost;
  result.search.stop_reason = reason;
  result.search.iterations.push_back(it);
  result.schedule = build_schedule(result.lowered, it.assignment, model.name(), it.cost, false);
  return result;
}

}  // namespace

SynthResult evaluate_schedule(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                              const SynthOptions& options, const ir::Schedule& schedule) {
  Lowered lowered = lower(graph, mesh, model, options.lower);
  const Assignment assignment = assignment_from_schedule(lowered, schedule);
  return single_plan(std::move(lowered), assignment, model, "evaluated");
}

SynthResult random_plan(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                        const SynthOptions& options, uint64_t seed) {
  Lowered lowered = lower(graph, mesh, model, options.lower);
  lowered.problem.name = "graph";
  apply_pins(lowered, options.pins);
  return random_plan(lowered, model, seed);
}

SynthResult random_plan(const Lowered& lowered, const costs::CostModel& model, uint64_t seed) {
  const Assignment assignment = random_assignment(lowered, seed);
  return single_plan(lowered, assignment, model, "random plan, seed " + std::to_string(seed));
}

}  // namespace shardsynth::synth
