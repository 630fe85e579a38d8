#include "synth/solver/lp_rounding.hpp"

#include <algorithm>
#include <numeric>

#include "synth/solver/folding.hpp"
#include "synth/solver/local_search.hpp"

namespace shardsynth::synth {
namespace {

// Per kernel node, the strategy holding the most LP weight of the original
// nodes folded into it (the first such on ties).
Assignment heaviest(const FoldedProblem& folded, const LpRelaxation& lp) {
  const Problem& kernel = folded.kernel;
  std::vector<std::vector<double>> weight(kernel.nodes.size());
  for (std::size_t k = 0; k < kernel.nodes.size(); ++k) weight[k].assign(kernel.nodes[k].size(), 0.0);
  for (std::size_t v = 0; v < folded.root.size(); ++v) {
    const int k = folded.root[v];
    if (k < 0) continue;
    for (int s = 0; s < kernel.nodes[k].size(); ++s) weight[k][s] += lp.values[v][folded.strategy_of[v][s]];
  }
  Assignment x(kernel.nodes.size(), 0);
  for (std::size_t k = 0; k < x.size(); ++k) {
    x[k] = static_cast<int>(std::max_element(weight[k].begin(), weight[k].end()) - weight[k].begin());
  }
  return x;
}

}  // namespace

Assignment round_lp(const Problem& problem, const LpRelaxation& lp) {
  if (!lp.has_duals() || problem.nodes.empty()) return {};
  const FoldedProblem folded = fold_problem(problem);
  if (folded.infeasible) return {};
  if (folded.kernel.nodes.empty()) return unfold(folded, {});
  LocalSearch search(folded);
  search.set(heaviest(folded, lp));
  if (!search.feasible() && !search.repair(nullptr, 100 * static_cast<int>(folded.kernel.nodes.size()))) return {};
  std::vector<int> order(folded.kernel.nodes.size());
  std::iota(order.begin(), order.end(), 0);
  search.descend(order, nullptr, true);
  Assignment plan = unfold(folded, search.assignment());
  return evaluate(problem, plan) < kForbidden ? plan : Assignment{};
}

}  // namespace shardsynth::synth
