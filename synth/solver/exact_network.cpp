// The cost network's step of the exact loop (exact_search.hpp;
// network_search.hpp): under a usage limit, right after the LP step, the
// problem folded exactly (folding.hpp) becomes a cost network whose time
// slots are knapsack rows, penalized by the LP's row duals and
// reparameterized (network_input.hpp). Its root propagation is a lower
// bound on every plan cheaper than the best one, often far above the LP's
// (the LP is solved on the unfolded kernel, and the search moves the rows'
// multipliers where the LP's stay fixed); then its branch and bound runs
// for a fixed number of search nodes (deterministic), cut by a share of the
// time left. Each cheaper plan it finds is a step (source "network", sat);
// the search itself is one step, unsat when it closed below the best cost.
// Then no plan is cheaper than the best one, so narrowing at the best cost
// leaves nothing and Z3's check "cost < best" answers unsat: the proof's
// last step, as after the LP branching (exact_branching.cpp).
#include <algorithm>
#include <string>

#include "synth/solver/exact_search.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/network_input.hpp"
#include "synth/solver/network_search.hpp"

namespace shardsynth::synth {
namespace {

// Folded kernels larger than this are left to the other steps: the search's
// nodes cost time linear in the kernel.
constexpr std::size_t kNetworkMaxVariables = 2'000;

}  // namespace

void ExactSearch::search_by_network() {
  if (options_.network_nodes <= 0 || relaxed_ || !kernel_.usage_limit || eliminated_below_) return;
  if ((best_ && *best_ <= result_.lower_bound) || out_of_time()) return;
  const int64_t incumbent = best_ ? *best_ : kForbidden;
  const auto start = Clock::now();
  const FoldedProblem folded = fold_problem(scored_, deadline_);
  if (folded.infeasible || folded.kernel.nodes.size() > kNetworkMaxVariables || out_of_time()) return;
  const NetworkInput input = network_input(scored_, folded, kernel_, lp_.get(), deadline_);
  NetworkSearchOptions search;
  search.max_nodes = options_.network_nodes;
  if (deadline_) search.deadline = start + (*deadline_ - start) / 4;  // the elimination, the branching and Z3 keep the rest
  const double prepared = prepared_by(start);
  const NetworkSearch found =
      search_network(input, incumbent, fold_assignment(folded, result_.best), search, [&](const Assignment& plan, int64_t cost) {
        Iteration it;
        it.source = "network";
        it.status = CheckStatus::sat;
        it.bound = best_;
        it.prepare_ms = result_.iterations.empty() || result_.iterations.back().source != "network" ? prepared : 0;
        it.assignment = unfold(folded, plan);
        it.cost = evaluate(scored_, it.assignment);
        if (it.cost != cost) {
          throw EvaluatorMismatch("network: the evaluator scores its plan " + std::to_string(it.cost) +
                                  " but the search scored " + std::to_string(cost));
        }
        improve(it);
        report(std::move(it));
      });
  Iteration it;
  it.source = "network";
  it.bound = incumbent < kForbidden ? std::optional<int64_t>(incumbent) : std::nullopt;
  it.prepare_ms = found.plan.empty() ? prepared : 0;
  it.solver_ms = found.ms;
  it.status = found.outcome == "closed" ? CheckStatus::unsat : CheckStatus::unknown;
  // the root's floor bounds the plans cheaper than the incumbent; the others cost at least that
  if (best_) {
    raise_lower_bound(std::min(found.root_bound, *best_));
  } else if (found.root_bound < kForbidden) {
    raise_lower_bound(found.root_bound);
  }
  report(std::move(it));
  if (found.outcome == "closed" && best_) eliminated_below_ = best_;
}

}  // namespace shardsynth::synth
