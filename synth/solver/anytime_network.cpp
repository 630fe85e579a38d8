#include "synth/solver/anytime_network.hpp"

#include <algorithm>
#include <string>

#include "synth/solver/network_input.hpp"
#include "synth/solver/step_publish.hpp"

namespace shardsynth::synth {
using Clock = std::chrono::steady_clock;

void search_network_after_anytime(const Problem& problem, const CegisOptions& options,
                                  std::optional<Clock::time_point> deadline, const IterationCallback& on_iteration,
                                  const BoundCallback& on_bound, CegisResult& result) {
  if (result.best.empty() || options.network_work <= 0) return;
  // the last step of the run: the deadline alone ends it (no work budget)
  std::optional<NetworkRun> run = run_network_search(problem, problem, nullptr, result.best_cost, result.best,
                                                     /*work=*/0, kNetworkMaxVariables, deadline, /*climb=*/false);
  if (!run) return;
  for (auto& [plan, cost] : run->plans) {
    Iteration it;
    it.source = "network";
    it.status = CheckStatus::sat;
    it.bound = result.best_cost;
    it.prepare_ms = &plan == &run->plans.front().first ? run->prepare_ms : 0;
    it.cost = evaluate(problem, plan);
    if (it.cost != cost) {
      throw EvaluatorMismatch("network: the evaluator scores its plan " + std::to_string(it.cost) +
                              " but the search scored " + std::to_string(cost));
    }
    if (it.cost >= result.best_cost) continue;
    it.assignment = std::move(plan);
    result.best = it.assignment;
    result.best_cost = it.cost;
    publish_step(std::move(it), on_iteration, result);
  }
  const NetworkSearch& found = run->found;
  Iteration it;
  it.source = "network";
  it.bound = result.best_cost;  // after the plans it found: closed means none below this
  it.prepare_ms = run->plans.empty() ? run->prepare_ms : 0;
  it.solver_ms = found.ms;
  const bool closed = found.outcome == "closed";
  it.status = closed ? CheckStatus::unsat : CheckStatus::unknown;
  publish_step(std::move(it), on_iteration, result);
  // closed: no plan below the best cost; else the root's floor bounds the
  // plans cheaper than the incumbent, and the others cost at least that
  raise_result_bound(closed ? result.best_cost : std::min(found.root_bound, result.best_cost), on_bound, result);
}

}  // namespace shardsynth::synth
