#include "synth/synthesizer.hpp"

#include "ir/error.hpp"
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
  result.search = run_cegis(result.lowered.problem, options.cegis, [&](const Iteration& it) {
    if (on_iteration) on_iteration(result.lowered, it);
  });
  if (result.search.best.empty()) throw NoPlanError("no plan found before the search stopped (" + result.search.stop_reason + ")");
  result.schedule = build_schedule(result.lowered, result.search.best, model.name(), result.search.best_cost,
                                   result.search.proven_optimal);
  return result;
}

SynthResult evaluate_schedule(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                              const SynthOptions& options, const ir::Schedule& schedule) {
  SynthResult result{lower(graph, mesh, model, options.lower), {}, {}};
  Iteration it;
  it.status = CheckStatus::sat;
  it.assignment = assignment_from_schedule(result.lowered, schedule);
  it.cost = evaluate(result.lowered.problem, it.assignment);
  if (it.cost >= kForbidden) throw ir::InputError("the schedule is forbidden under these options (e.g. over the memory budget)");
  result.search.best = it.assignment;
  result.search.best_cost = it.cost;
  result.search.stop_reason = "evaluated";
  result.search.iterations.push_back(it);
  result.schedule = build_schedule(result.lowered, it.assignment, model.name(), it.cost, false);
  return result;
}

}  // namespace shardsynth::synth
