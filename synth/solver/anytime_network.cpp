#include "synth/solver/anytime_network.hpp"

#include <algorithm>

#include "synth/solver/network_input.hpp"
#include "synth/solver/step_publish.hpp"

namespace shardsynth::synth {
using Clock = std::chrono::steady_clock;

void search_network_after_anytime(const Problem& problem, const CegisOptions& options,
                                  std::optional<Clock::time_point> deadline, const IterationCallback& on_iteration,
                                  const BoundCallback& on_bound, CegisResult& result) {
  if (result.best.empty() || options.network_work <= 0) return;
  // the last step of the run: regions first, then the whole network; the deadline alone ends it (no work budget)
  std::optional<NetworkRegionOptions> regions;
  if (deadline) {
    regions.emplace();
    regions->seed = options.seed;
    regions->deadline = Clock::now() + (*deadline - Clock::now()) * kRegionsShare / 4;
  }
  std::optional<NetworkRun> run = run_network_search(problem, problem, nullptr, result.best_cost, result.best,
                                                     /*work=*/0, kNetworkMaxVariables, deadline, /*climb=*/false,
                                                     std::max(1, options.threads), regions);
  if (!run) return;
  for (std::size_t k = 0; k < run->plans.size(); ++k) {
    Iteration it = network_plan_step(problem, *run, k, result.best_cost);
    if (it.cost >= result.best_cost) continue;
    result.best = it.assignment;
    result.best_cost = it.cost;
    publish_step(std::move(it), on_iteration, result);
  }
  const NetworkSearch& found = run->found;
  const bool closed = found.outcome == "closed";
  publish_step(network_search_step(*run, result.best_cost), on_iteration, result);  // closed: none below the best
  // closed: no plan below the best cost; else the root's floor bounds the
  // plans cheaper than the incumbent, and the others cost at least that
  raise_result_bound(closed ? result.best_cost : std::min(found.root_bound, result.best_cost), on_bound, result);
}

}  // namespace shardsynth::synth
