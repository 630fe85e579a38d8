// The elimination step of the exact loop (exact_search.hpp;
// elimination_search.hpp): under a usage limit, with the LP's reduced costs
// and an incumbent, the Pareto elimination either finds the optimum (a step
// with source "elimination") or proves that nothing is cheaper than the
// incumbent (an "elimination" step answering unsat). Either way every
// strategy is then in no plan cheaper than the best one, so narrowing at
// the best cost forbids them all and Z3's check "cost < best" on what is
// left answers unsat: that check is the proof's last step.
#include <chrono>
#include <string>

#include "synth/solver/elimination_search.hpp"
#include "synth/solver/exact_search.hpp"

namespace shardsynth::synth {

void ExactSearch::search_by_elimination() {
  if (!options_.elimination || !lp_ || !kernel_.usage_limit || !best_) return;
  const auto start = Clock::now();
  std::optional<EliminationSearch> before;  // the preparation's search, when it gave up
  if (prepared_ && prepared_->elimination) {  // run before the anytime search (anytime_phase.cpp)
    before = std::move(*prepared_->elimination);
    prepared_->elimination.reset();
    if (before->proven()) return report_elimination(*before, start);  // the anytime search was skipped: its steps come next
    // It gave up before the anytime search ran: its steps would be out of
    // order now, so only the bound it proved is kept, and the search below
    // resumes from its rows.
    if (best_) raise_lower_bound(std::min(offset_ + before->bound, *best_));
  }
  if (*best_ <= result_.lower_bound || out_of_time()) return;
  std::optional<Clock::time_point> until = deadline_;
  // Z3 keeps an eighth when it gives up; the cutoff schedule (cutoff_schedule.hpp)
  // plans each step within 0.8 of what is left, so it leaves more.
  if (deadline_) until = start + (*deadline_ - start) * 7 / 8;
  report_elimination(close_by_elimination(kernel_, *lp_, *best_ - offset_, until, before ? &*before : nullptr),
                     Clock::now());
}

// Each cutoff is a step: "none below it" raises the bound, a plan improves;
// a proof lets narrowing at the best cost leave nothing for Z3's last check.
void ExactSearch::report_elimination(const EliminationSearch& found, Clock::time_point start) {
  for (const EliminationProbe& probe : found.probes) {
    Iteration it;
    it.source = "elimination";
    it.bound = offset_ + probe.cutoff;
    it.prepare_ms = &probe == &found.probes.front() ? prepared_by(start) : 0;
    it.solver_ms = probe.ms;
    if (probe.outcome == "found") {
      it.status = CheckStatus::sat;
      it.assignment = expand(first_, found.plan);
      it.cost = evaluate(scored_, it.assignment);
      if (it.cost >= kForbidden || it.cost != offset_ + found.cost) {
        throw EvaluatorMismatch("elimination: the evaluator scores its plan " + std::to_string(it.cost) +
                                " but the kernel's cost is " + std::to_string(offset_ + found.cost));
      }
      if (!best_ || it.cost < *best_) improve(it);
    } else if (probe.outcome == "none") {
      it.status = CheckStatus::unsat;
      raise_lower_bound(best_ ? std::min(*it.bound, *best_) : *it.bound);
    } else {
      it.status = CheckStatus::unknown;
    }
    report(std::move(it));
  }
  if (found.proven()) eliminated_below_ = offset_ + found.bound;
}

}  // namespace shardsynth::synth
