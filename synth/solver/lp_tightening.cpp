#include "synth/solver/lp_tightening.hpp"

#include <algorithm>
#include <memory>

#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/lp_rounding.hpp"

namespace shardsynth::synth {

LpTightening tighten_with_lp(Problem& kernel, std::optional<int64_t> incumbent,
                             std::optional<std::chrono::steady_clock::time_point> deadline) {
  const auto start = std::chrono::steady_clock::now();
  LpOptions options;
  if (deadline) options.deadline = start + (*deadline - start) / 4;  // the LP gets a quarter of the time left
  auto relaxation = std::make_shared<LpRelaxation>(solve_lp_relaxation(kernel, options));
  const LpRelaxation& lp = *relaxation;
  LpTightening step;
  step.outcome = lp.outcome;
  step.bound = lp.bound;
  step.memory_rows = lp.memory_rows;
  step.columns = lp.columns;
  if (lp.has_duals()) {
    step.plan = round_lp(kernel, lp);
    if (!step.plan.empty()) step.plan_cost = evaluate(kernel, step.plan);
    const int64_t cutoff = std::min(incumbent.value_or(kForbidden), step.plan_cost);
    if (cutoff < kForbidden) step.fixed = fix_by_reduced_cost(kernel, lp, cutoff);
    step.cutoff = cutoff;
    step.relaxation = std::move(relaxation);
  }
  step.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return step;
}

}  // namespace shardsynth::synth
