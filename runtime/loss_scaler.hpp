#pragma once
// Dynamic loss scaling for float16 training, torch.amp.GradScaler's scheme
// with its defaults: the loss's gradient is multiplied by scale() before the
// backward pass; the optimizer step divides the gradients by it (in fp32,
// by the fp32 reciprocal) and is skipped when any gradient on any rank is
// not finite. update() then halves the scale after a skipped step, and
// doubles it after `interval` steps in a row without one.
#include <cstdint>

namespace shardsynth::runtime {

struct LossScalerOptions {
  double init = 65536.0;  // the first scale (2^16)
  double growth = 2.0;    // factor after `interval` finite steps in a row
  double backoff = 0.5;   // factor after a step with a non-finite gradient
  int interval = 2000;    // finite steps in a row before the scale grows
};

class LossScaler {
 public:
  explicit LossScaler(LossScalerOptions options = {}) : options_(options), scale_(options.init) {}
  // The factor the loss's gradient is multiplied by.
  double scale() const { return scale_; }
  // 1 / scale(), as the fp32 number the gradients are multiplied by.
  float inverse() const { return static_cast<float>(1.0 / scale_); }
  // After a step: `found_inf` when some gradient was not finite (the step was skipped).
  void update(bool found_inf);
  // Steps skipped so far.
  int64_t skipped() const { return skipped_; }

 private:
  LossScalerOptions options_;
  double scale_;          // the current scale
  int streak_ = 0;        // finite steps since the scale last changed
  int64_t skipped_ = 0;   // steps with a non-finite gradient
};

}  // namespace shardsynth::runtime
