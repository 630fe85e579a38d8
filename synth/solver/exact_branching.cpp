// The branching step of the exact loop (exact_search.hpp; lp_branching.hpp):
// under a usage limit, when the LP leaves a gap, branch and bound on the LP
// relaxation of the kernel. By default (BranchingMode::automatic) it runs
// once, when a bisection probe spends Z3's resource budget for one probe
// without an answer; the first probe comes once the Pareto elimination has
// stopped without a proof. Where the LP's reduced costs narrow the kernel well, Z3's checks
// stay small (the contest's tightened B and G), the bisection proves and the
// branching never runs; where the bound that the anytime search proved lies
// far above the LP's, narrowing leaves Z3 much even at the first probe (the
// tight generated 816-node problems), and the branching takes over with
// half the time left; the bisection, without a budget, resumes when it
// gives up. Z3's resource count is deterministic, so the
// rule does not depend on the machine's speed (BENCHMARKS.md, issue 32,
// fifth part). With --branching it runs before the
// Pareto elimination instead, which gets what is left. Each cheaper plan it
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
  if (options_.lp_branching == BranchingMode::always && may_branch()) branch();
}

// Whether the branching can narrow the gap now: an LP, a usage limit, an
// incumbent above the bound, and no proof by the elimination yet.
bool ExactSearch::may_branch() const {
  if (!lp_ || !kernel_.usage_limit || !best_ || eliminated_below_ || branched_) return false;
  if (*best_ <= result_.lower_bound || out_of_time()) return false;
  return !(prepared_ && prepared_->elimination && prepared_->elimination->proven());  // proven before the anytime search
}

// Z3's resource budget for the next bisection probe: the automatic
// branching's, while it may still run; 0 = none.
uint64_t ExactSearch::probe_rlimit() const {
  return options_.lp_branching == BranchingMode::automatic && may_branch() ? options_.branch_after_rlimit : 0;
}

void ExactSearch::branch() {
  branched_ = true;
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
