// The LP step of the exact loop (exact_search.hpp; lp_tightening.hpp): with
// a usage limit and an open gap, the LP relaxation's bound, its rounded plan
// as a step, and reduced-cost fixing of the kernel at the best cost (the
// preparation's LP when it ran one). Narrowing fixes again at each probe's
// bound with the relaxation kept here.
#include <algorithm>
#include <chrono>

#include "synth/solver/exact_search.hpp"

namespace shardsynth::synth {

void ExactSearch::bound_by_lp() {
  // Only memory rows make the LP stronger than the reparameterization's bound.
  if (!options_.lp_bound || !kernel_.usage_limit || (best_ && *best_ <= result_.lower_bound)) return;
  const auto start = Clock::now();
  const std::optional<int64_t> incumbent = best_ ? std::optional<int64_t>(*best_ - offset_) : std::nullopt;
  const bool reuse = prepared_ && prepared_->lp;
  LpTightening lp = reuse ? std::move(*prepared_->lp) : tighten_with_lp(kernel_, incumbent, deadline_);
  lp_ = std::move(lp.relaxation);
  // A kernel fixed before bounds only the plans cheaper than the best one.
  raise_lower_bound(best_ ? std::min(offset_ + lp.bound, *best_) : offset_ + lp.bound);
  if (lp.plan.empty() || (best_ && offset_ + lp.plan_cost >= *best_)) return;
  Iteration it;
  it.source = "lp";
  it.status = CheckStatus::sat;
  it.prepare_ms = prepared_by(start);
  it.assignment = expand(first_, lp.plan);
  it.cost = evaluate(scored_, it.assignment);
  it.solver_ms = lp.ms;
  if (it.cost >= kForbidden) return;
  improve(it);
  report(std::move(it));
}

}  // namespace shardsynth::synth
