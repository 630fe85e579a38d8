// Training in 16-bit dtypes (runtime/training.hpp): fp32 master weights that
// the optimizer updates, gradients of the dtype, and float16's dynamic loss
// scale (runtime/loss_scaler.hpp), skipping a step whose gradients overflow.
// One device (train_reference); the 8-rank runs against PyTorch are
// tests/python/mixed_train_check.py.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "ir/models.hpp"
#include "runtime/half.hpp"
#include "runtime/init.hpp"
#include "runtime/loss_scaler.hpp"
#include "runtime/training.hpp"

using namespace shardsynth;
using namespace shardsynth::runtime;

namespace {

ir::Graph mlp(ir::DType dtype) {
  ir::MlpConfig c;
  c.batch = 2;
  c.seq = 4;
  c.hidden = 8;
  c.ffn = 16;
  c.dtype = dtype;
  return ir::build_mlp(c);
}

TrainResult train(ir::DType dtype, int steps, LossScalerOptions scaler = {}) {
  TrainSetup setup;
  setup.seed = 3;
  setup.options.steps = steps;
  setup.scaler = scaler;
  return train_reference(mlp(dtype), setup);
}

bool representable(const Tensor& t, ir::DType dtype) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    const float v = element(t, static_cast<std::size_t>(i));
    if (round_to(v, dtype) != v) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("LossScaler_BacksOffOnOverflowAndGrowsAfterTheInterval") {
  LossScaler scaler({8.0, 2.0, 0.5, 2});
  CHECK(scaler.scale() == 8.0);
  CHECK(scaler.inverse() == 0.125f);
  scaler.update(true);
  CHECK(scaler.scale() == 4.0);
  scaler.update(false);
  CHECK(scaler.scale() == 4.0);
  scaler.update(true);  // an overflow restarts the streak
  scaler.update(false);
  CHECK(scaler.scale() == 2.0);
  scaler.update(false);
  CHECK(scaler.scale() == 4.0);
  CHECK(scaler.skipped() == 2);
  CHECK(LossScaler().scale() == 65536.0);  // GradScaler's default init_scale
}

TEST_CASE("mixed_precision_Bf16TrainsMasterWeightsInFp32") {
  const TrainResult half = train(ir::DType::bfloat16, 3);
  const TrainResult full = train(ir::DType::float32, 3);
  REQUIRE(half.losses.size() == 3);
  for (int s = 0; s < 3; ++s) CHECK(half.losses[s] == doctest::Approx(full.losses[s]).epsilon(1e-2));
  CHECK(half.losses[2] < half.losses[0]);
  CHECK(half.skipped == 0);
  CHECK(half.loss_scale == 1);
  for (const auto& entry : half.first_grads) {
    const auto& name = entry.first;  // a plain reference: clang 14 cannot capture a structured binding
    CAPTURE(name);
    CHECK(representable(entry.second, ir::DType::bfloat16));  // reduced and kept in bf16
  }
  // The parameters written out are the fp32 masters: Adam's steps of about
  // lr = 1e-3 from the seeded values, most of which bf16 cannot hold.
  bool below_bf16 = false;
  for (const auto& [name, value] : half.params) below_bf16 = below_bf16 || !representable(value, ir::DType::bfloat16);
  CHECK(below_bf16);
}

TEST_CASE("mixed_precision_Fp16SkipsOverflowingStepsAndHalvesTheScale") {
  // A scale of 2^40 makes every gradient overflow float16: each step is
  // skipped, the masters stay as seeded, and the scale halves each time.
  const TrainResult skipped = train(ir::DType::float16, 3, {std::ldexp(1.0, 40), 2.0, 0.5, 2000});
  CHECK(skipped.skipped == 3);
  CHECK(skipped.loss_scale == std::ldexp(1.0, 37));
  for (const auto& entry : skipped.params) {
    const auto& name = entry.first;
    CAPTURE(name);
    CHECK(entry.second == init_param(name, entry.second.shape, 3));
  }
  CHECK(skipped.losses[0] == skipped.losses[2]);
  // A scale that fits trains, and grows after `interval` finite steps.
  const TrainResult trained = train(ir::DType::float16, 3, {1024.0, 2.0, 0.5, 1});
  CHECK(trained.skipped == 0);
  CHECK(trained.loss_scale == 8192.0);
  CHECK(trained.losses[2] < trained.losses[0]);
  const TrainResult full = train(ir::DType::float32, 3);
  for (int s = 0; s < 3; ++s) CHECK(trained.losses[s] == doctest::Approx(full.losses[s]).epsilon(1e-2));
}
