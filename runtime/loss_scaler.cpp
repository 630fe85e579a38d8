#include "runtime/loss_scaler.hpp"

#include <cmath>

namespace shardsynth::runtime {

void LossScaler::update(bool found_inf) {
  if (found_inf) {
    scale_ *= options_.backoff;
    streak_ = 0;
    ++skipped_;
    return;
  }
  if (++streak_ < options_.interval) return;
  // GradScaler keeps the scale when growing it would overflow fp32.
  if (const double grown = scale_ * options_.growth; std::isfinite(static_cast<float>(grown))) scale_ = grown;
  streak_ = 0;
}

}  // namespace shardsynth::runtime
