#include "synth/solver/step_rule.hpp"

#include <algorithm>
#include <cmath>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

namespace {

// Moves lambda by Polyak's step times `theta`; false when the subgradient is zero.
bool polyak_move(const Subgradient& sub, const StepTargets& targets, double theta, std::vector<double>& lambda) {
  if (sub.norm <= 0) return false;  // the proposal keeps the limit where nothing is priced: no step
  const double estimate = std::min(sub.dual, static_cast<double>(targets.lower_bound));
  const double target =
      targets.best < kForbidden ? static_cast<double>(targets.best) : std::max(1.05 * estimate, estimate + 1.0);
  const double step = theta * std::max(target - estimate, 1e-6 * std::max(1.0, std::abs(estimate))) / sub.norm;
  for (std::size_t t = 0; t < lambda.size(); ++t) lambda[t] = std::max(0.0, lambda[t] + step * sub.g[t]);
  return true;
}

}  // namespace

bool StallingPolyakStep::update(const Subgradient& sub, const StepTargets& targets, std::vector<double>& lambda) {
  if (sub.dual > best_dual_ + 1e-9 * std::abs(best_dual_)) {
    best_dual_ = sub.dual;
    stalled_ = 0;
  } else if (++stalled_ >= patience_) {
    theta_ /= 2;
    stalled_ = 0;
    if (theta_ < 1e-3) theta_ = 1.0;
  }
  return polyak_move(sub, targets, theta_, lambda);
}

bool PolyakStep::update(const Subgradient& sub, const StepTargets& targets, std::vector<double>& lambda) {
  if (++rounds_ >= 8) {
    theta_ /= 2;
    rounds_ = 0;
    if (theta_ < 1e-3) theta_ = 1.0;
  }
  if (sub.norm <= 0) return false;  // the proposal keeps the limit where nothing is priced: no step
  const double estimate = std::min(sub.dual, static_cast<double>(targets.lower_bound));
  const double target =
      targets.best < kForbidden ? static_cast<double>(targets.best) : std::max(1.05 * estimate, estimate + 1.0);
  const double step = theta_ * std::max(target - estimate, 1e-6 * std::max(1.0, std::abs(estimate))) / sub.norm;
  for (std::size_t t = 0; t < lambda.size(); ++t) lambda[t] = std::max(0.0, lambda[t] + step * sub.g[t]);
  return true;
}

}  // namespace shardsynth::synth
