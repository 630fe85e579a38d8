// The branching step of the exact loop (exact_search.hpp; lp_branching.hpp):
// under a usage limit, when the LP leaves a gap, branch and bound on the LP
// relaxation of the kernel (before the Pareto elimination, which gets what
// is left when it gives up). Each cheaper plan it
// finds is a step (source "branch", sat); the search itself is one step,
// unsat when every branch closed below the best cost. Then every strategy is
// in no plan cheaper than the best one, so narrowing at the best cost leaves
// nothing and Z3's check "cost < best" answers unsat: the proof's last step,
// as after the elimination (exact_elimination.cpp), which is then skipped.
#include <string>

#include "synth/solver/exact_search.hpp"
#include "synth/solver/lp_branching.hpp"

namespace shardsynth::synth {

void ExactSearch::search_by_branching() {
  if (!options_.lp_branching || !lp_ || !kernel_.usage_limit || !best_ || eliminated_below_) return;
  if (*best_ <= result_.lower_bound || out_of_time()) return;
  if (prepared_ && prepared_->elimination && prepared_->elimination->proven()) return;  // proven before the anytime search
  const auto start = Clock::now();
  BranchingOptions branching;
  if (deadline_) branching.deadline = start + (*deadline_ - start) / 2;  // the elimination and Z3 keep half when it gives up
  const double prepared = prepared_by(start);
  const Branching found = branch_on_lp(kernel_, *best_ - offset_, branching, [&](const Assignment& plan, int64_t cost) {
    Iteration it;
    it.source = "branch";
    it.status = CheckStatus::sat;
    it.bound = best_;
    it.prepare_ms = result_.iterations.empty() || result_.iterations.back().source != "branch" ? prepared : 0;
    it.assignment = expand(first_, plan);
    it.cost = evaluate(scored_, it.assignment);
    if (it.cost >= kForbidden || it.cost != offset_ + cost) {
      throw EvaluatorMismatch("branch: the evaluator scores its plan " + std::to_string(it.cost) +
                              " but the kernel's cost is " + std::to_string(offset_ + cost));
    }
    improve(it);
    report(std::move(it));
  });
  Iteration it;
  it.source = "branch";
  it.bound = best_;
  it.prepare_ms = found.plan.empty() ? prepared : 0;
  it.solver_ms = found.ms;
  it.status = found.outcome == "closed" ? CheckStatus::unsat : CheckStatus::unknown;
  raise_lower_bound(std::min(offset_ + found.bound, *best_));
  report(std::move(it));
  if (found.outcome == "closed") eliminated_below_ = best_;
}

}  // namespace shardsynth::synth
