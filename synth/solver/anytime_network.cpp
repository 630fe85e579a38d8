#include "synth/solver/anytime_network.hpp"

#include <algorithm>

#include "synth/solver/folding.hpp"
#include "synth/solver/network_input.hpp"
#include "synth/solver/network_regions.hpp"
#include "synth/solver/step_publish.hpp"

namespace shardsynth::synth {
using Clock = std::chrono::steady_clock;
namespace {

// Each of `run`'s plans cheaper than `result`'s best becomes the best and a step.
void publish_network_plans(const Problem& problem, NetworkRun& run, const IterationCallback& on_iteration,
                           CegisResult& result) {
  for (std::size_t k = 0; k < run.plans.size(); ++k) {
    Iteration it = network_plan_step(problem, run, k, result.best_cost);
    if (it.cost >= result.best_cost) continue;
    result.best = it.assignment;
    result.best_cost = it.cost;
    publish_step(std::move(it), on_iteration, result);
  }
}

}  // namespace

void search_regions_after_anytime(const Problem& problem, const CegisOptions& options,
                                  std::optional<Clock::time_point> deadline, const IterationCallback& on_iteration,
                                  CegisResult& result) {
  if (result.best.empty() || options.network_work <= 0) return;
  const FoldedProblem folded = fold_problem(problem, deadline);
  if (folded.infeasible) return;
  const Assignment plan = fold_assignment(folded, result.best);
  if (plan.empty()) return;
  const NetworkInput input = plain_network_input(problem, folded);
  NetworkRegionOptions regions;
  regions.seed = options.seed;
  regions.threads = std::max(1, options.threads);
  regions.deadline = deadline;
  NetworkRun run;
  for (auto& [found, cost] : search_network_regions(input, result.best_cost, plan, regions).plans) {
    run.plans.emplace_back(unfold(folded, found), cost);
  }
  publish_network_plans(problem, run, on_iteration, result);
}

void search_network_after_anytime(const Problem& problem, const CegisOptions& options,
                                  std::optional<Clock::time_point> deadline, const IterationCallback& on_iteration,
                                  const BoundCallback& on_bound, CegisResult& result) {
  if (result.best.empty() || options.network_work <= 0) return;
  // the last step of the run: regions first, then the whole network; the deadline alone ends it (no work budget)
  std::optional<NetworkRegionOptions> regions;
  if (deadline) {
    regions.emplace();
    regions->seed = options.seed;
    regions->threads = std::max(1, options.threads);
    regions->deadline = Clock::now() + (*deadline - Clock::now()) * kRegionsShare / 4;
  }
  std::optional<NetworkRun> run = run_network_search(problem, problem, nullptr, result.best_cost, result.best,
                                                     /*work=*/0, kNetworkMaxVariables, deadline, /*climb=*/false,
                                                     std::max(1, options.threads), regions);
  if (!run) return;
  publish_network_plans(problem, *run, on_iteration, result);
  const NetworkSearch& found = run->found;
  const bool closed = found.outcome == "closed";
  publish_step(network_search_step(*run, result.best_cost), on_iteration, result);  // closed: none below the best
  // closed: no plan below the best cost; else the root's floor bounds the
  // plans cheaper than the incumbent, and the others cost at least that
  raise_result_bound(closed ? result.best_cost : std::min(found.root_bound, result.best_cost), on_bound, result);
}

}  // namespace shardsynth::synth
