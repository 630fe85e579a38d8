// The elimination step of the exact loop (exact_search.hpp;
// elimination_search.hpp): under a usage limit, with the LP's reduced costs
// and an incumbent, the Pareto elimination either finds the optimum (a step
// with source "elimination") or proves that nothing is cheaper than the
// incumbent (an "elimination" step answering unsat). Either way every
// strategy is then in no plan cheaper than the best one, so narrowing at
// the best cost forbids them all and Z3's check "cost < best" on what is
// left answers unsat: that check is the proof's last step.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "synth/solver/elimination_search.hpp"
#include "synth/solver/exact_search.hpp"

namespace shardsynth::synth {

void ExactSearch::search_by_elimination() {
  if (!options_.elimination || !lp_ || !kernel_.usage_limit || !best_ || *best_ <= result_.lower_bound) return;
  if (out_of_time()) return;
  const auto start = Clock::now();
  std::optional<Clock::time_point> until = deadline_;
  if (deadline_) until = start + (*deadline_ - start) * 3 / 4;  // Z3 keeps a quarter when it gives up
  int64_t cut = *best_;
  if (const char* c = std::getenv("SHARDSYNTH_ELIM_CUTOFF")) cut = std::min<int64_t>(cut, std::atoll(c));
  const EliminationSearch found = close_by_elimination(kernel_, *lp_, cut - offset_, until);
  if (std::getenv("SHARDSYNTH_ELIM_DEBUG")) {
    std::fprintf(stderr, "[elim] cutoff %lld outcome %s cost %lld rows %d runs %d labels %lld width %d ms %.1f\n",
                 static_cast<long long>(*best_), found.outcome.c_str(), static_cast<long long>(found.cost + offset_), found.rows,
                 found.runs, static_cast<long long>(found.labels), found.width, found.ms);
  }
  Iteration it;
  it.source = "elimination";
  it.bound = best_;
  it.prepare_ms = prepared_by(start);
  it.solver_ms = found.ms;
  if (!found.plan.empty()) {
    it.status = CheckStatus::sat;
    it.assignment = expand(first_, found.plan);
    it.cost = evaluate(scored_, it.assignment);
    if (it.cost >= kForbidden || it.cost != offset_ + found.cost || it.cost >= *best_) {
      throw EvaluatorMismatch("elimination: the evaluator scores its plan " + std::to_string(it.cost) +
                              " but the kernel's cost is " + std::to_string(offset_ + found.cost));
    }
    improve(it);
  } else {
    it.status = found.proven() ? CheckStatus::unsat : CheckStatus::unknown;
  }
  if (found.proven()) eliminated_below_ = best_;
  report(std::move(it));
}

}  // namespace shardsynth::synth
