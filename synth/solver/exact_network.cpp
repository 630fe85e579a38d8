// The cost network's step of the exact loop (exact_search.hpp;
// network_search.hpp): under a usage limit, right after the LP step, the
// problem folded exactly (folding.hpp) becomes a cost network whose time
// slots are knapsack rows, penalized by the LP's row duals and
// reparameterized (network_input.hpp). Its root propagation is a lower
// bound on every plan cheaper than the best one, often far above the LP's
// (the LP is solved on the unfolded kernel, and the search moves the rows'
// multipliers where the LP's stay fixed); then its branch and bound runs
// for a fixed amount of work (values scanned: deterministic), cut by a
// share of the time left. Each cheaper plan it finds is a step (source "network", sat);
// the search itself is one step, unsat when it closed below the best cost.
// Then no plan is cheaper than the best one, so narrowing at the best cost
// leaves nothing and Z3's check "cost < best" answers unsat: the proof's
// last step, as after the LP branching (exact_branching.cpp).
#include <algorithm>
#include <string>

#include "synth/solver/exact_search.hpp"
#include "synth/solver/network_input.hpp"
#include "synth/solver/network_search.hpp"

namespace shardsynth::synth {

void ExactSearch::search_by_network() {
  if (options_.network_work <= 0 || relaxed_ || !kernel_.usage_limit || eliminated_below_) return;
  if ((best_ && *best_ <= result_.lower_bound) || out_of_time()) return;
  const auto start = Clock::now();
  std::optional<NetworkRun> run;
  if (prepared_ && prepared_->network) {  // closed before the anytime search, which was then skipped
    run = std::move(prepared_->network);
    prepared_->network.reset();
  } else {
    std::optional<Clock::time_point> until = deadline_;
    if (deadline_) until = start + (*deadline_ - start) / 2;  // the elimination, the branching and Z3 keep the rest
    run = run_network_search(scored_, kernel_, lp_.get(), best_ ? *best_ : kForbidden, result_.best,
                             options_.network_work, kNetworkMaxVariables, until,
                             /*climb=*/false, std::max(1, options_.threads));
  }
  if (!run) return;
  for (std::size_t k = 0; k < run->plans.size(); ++k) {
    Iteration it = network_plan_step(scored_, *run, k, best_);
    if (best_ && it.cost >= *best_) continue;
    improve(it);
    report(std::move(it));
  }
  const NetworkSearch& found = run->found;
  Iteration it = network_search_step(*run, best_);  // after the plans it found: closed means none below the best
  // closed: no plan below the best cost; else the root's floor bounds the
  // plans cheaper than the incumbent, and the others cost at least that
  if (found.outcome == "closed" && best_) {
    raise_lower_bound(*best_);
  } else if (best_) {
    raise_lower_bound(std::min(found.root_bound, *best_));
  } else if (found.root_bound < kForbidden) {
    raise_lower_bound(found.root_bound);
  }
  report(std::move(it));
  if (found.outcome == "closed" && best_) eliminated_below_ = best_;
}

}  // namespace shardsynth::synth
