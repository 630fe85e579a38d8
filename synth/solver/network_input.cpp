#include "synth/solver/network_input.hpp"

#include "synth/solver/network_portfolio.hpp"

#include <algorithm>
#include <string>

#include "synth/solver/dual_bound.hpp"
#include "synth/solver/row_penalties.hpp"

namespace shardsynth::synth {

std::vector<double> duals_on_rows(const std::vector<KnapsackRow>& rows, const Problem& kernel, const LpRelaxation& lp) {
  std::vector<double> duals(rows.size(), 0);
  for (std::size_t k = 0; k < lp.binding_rows.size() && k < lp.binding_duals.size(); ++k) {
    int64_t step = 0;
    for (const int v : lp.binding_rows[k]) step = std::max(step, kernel.nodes[v].live_from);
    const auto after = std::upper_bound(rows.begin(), rows.end(), step,
                                        [](int64_t s, const KnapsackRow& row) { return s < row.step; });
    if (after != rows.begin()) duals[after - rows.begin() - 1] += lp.binding_duals[k];
  }
  return duals;
}

NetworkInput plain_network_input(const Problem& problem, const FoldedProblem& folded) {
  NetworkInput input;
  input.rows = rows_of_folded(folded);
  input.score = [&problem, &folded](const Assignment& plan) { return evaluate(problem, unfold(folded, plan)); };
  input.network = folded.kernel;
  input.offset = folded.constant;
  return input;
}

NetworkInput network_input(const Problem& problem, const FoldedProblem& folded, const Problem& kernel,
                           const LpRelaxation* lp, std::optional<std::chrono::steady_clock::time_point> deadline) {
  NetworkInput input = plain_network_input(problem, folded);
  Problem network = std::move(input.network);
  int64_t offset = input.offset;
  if (lp && lp->has_duals() && folded.usage_limit && *folded.usage_limit > 0) {
    input.multipliers = multipliers_of_duals(duals_on_rows(input.rows, kernel, *lp), *folded.usage_limit);
    PenalizedKernel penalized = penalize_rows(network, input.rows, input.multipliers);
    network = std::move(penalized.problem);
    offset += penalized.constant;
  }
  DualOptions options;
  options.decode = false;
  options.deadline = deadline;
  DualBound dual = reparameterize(network, options);
  input.network = std::move(dual.problem);
  input.offset = offset + dual.constant;
  return input;
}

std::optional<NetworkRun> run_network_search(const Problem& problem, const Problem& kernel, const LpRelaxation* lp,
                                             int64_t incumbent, const Assignment& hint, long work,
                                             std::size_t max_variables,
                                             std::optional<std::chrono::steady_clock::time_point> deadline, bool climb,
                                             int threads, const std::optional<NetworkRegionOptions>& regions) {
  const auto start = std::chrono::steady_clock::now();
  const FoldedProblem folded = fold_problem(problem, deadline);
  if (folded.infeasible || folded.kernel.nodes.size() > max_variables) return std::nullopt;
  // with the LP's duals, the penalized network first and the plain one beside it (network_portfolio.hpp)
  std::vector<NetworkInput> inputs;
  inputs.push_back(network_input(problem, folded, kernel, lp, deadline));
  const auto& q = inputs.front().multipliers.q;
  if (std::any_of(q.begin(), q.end(), [](int64_t m) { return m > 0; })) inputs.push_back(network_input(problem, folded, kernel, nullptr, deadline));
  std::vector<const NetworkInput*> members;
  for (const NetworkInput& input : inputs) members.push_back(&input);
  NetworkRun run;
  run.prepare_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  Assignment from = fold_assignment(folded, hint);
  if (regions && !from.empty()) {  // regions of the first network first, from the hint
    NetworkRegionRun lns = search_network_regions(inputs.front(), incumbent, from, *regions);
    for (auto& [plan, cost] : lns.plans) run.plans.emplace_back(unfold(folded, plan), cost);
    if (!lns.plans.empty()) {
      from = lns.plans.back().first;
      incumbent = lns.plans.back().second;
    }
  }
  NetworkSearchOptions options;
  options.max_work = work;
  options.deadline = deadline;
  PortfolioRun found = search_portfolio(members, incumbent, from, options, climb, threads);
  for (auto& [plan, cost] : found.plans) run.plans.emplace_back(unfold(folded, plan), cost);
  run.found = std::move(found.found);
  return run;
}

Iteration network_plan_step(const Problem& problem, NetworkRun& run, std::size_t k, std::optional<int64_t> below) {
  auto& [plan, cost] = run.plans[k];
  Iteration it;
  it.source = "network";
  it.status = CheckStatus::sat;
  it.bound = below;
  it.prepare_ms = k == 0 ? run.prepare_ms : 0;
  it.assignment = std::move(plan);
  it.cost = evaluate(problem, it.assignment);
  if (it.cost != cost) {
    throw EvaluatorMismatch("network: the evaluator scores its plan " + std::to_string(it.cost) +
                            " but the search scored " + std::to_string(cost));
  }
  return it;
}

Iteration network_search_step(const NetworkRun& run, std::optional<int64_t> below) {
  Iteration it;
  it.source = "network";
  it.bound = below;
  it.prepare_ms = run.plans.empty() ? run.prepare_ms : 0;
  it.solver_ms = run.found.ms;
  it.status = run.found.outcome == "closed" ? CheckStatus::unsat : CheckStatus::unknown;
  return it;
}

}  // namespace shardsynth::synth
