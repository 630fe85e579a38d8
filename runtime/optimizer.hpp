#pragma once
// The optimizers a training run steps each rank's parameter shards with, in
// place and elementwise, so replicas that get the same gradient stay equal.
//
//  - sgd: p -= lr * g.
//  - adam: torch.optim.Adam's defaults (beta1 0.9, beta2 0.999, eps 1e-8,
//    no weight decay), bias-corrected: m = b1 m + (1 - b1) g,
//    v = b2 v + (1 - b2) g^2, p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

enum class OptimizerKind { sgd, adam };

// "sgd" / "adam"; throws ir::InputError naming anything else.
OptimizerKind parse_optimizer(std::string_view text);
std::string optimizer_name(OptimizerKind kind);

class Optimizer {
 public:
  // Throws ir::InputError when lr is not a positive finite number.
  Optimizer(OptimizerKind kind, double lr);
  // Starts step t + 1 (Adam's bias correction counts steps from 1).
  void begin_step() { ++step_; }
  // Allocates `name`'s state for a shard of `shape` now rather than at its
  // first update (Adam: zero moments, as that update would; sgd: none), so
  // that a rank holds it from the first step on as the memory model counts.
  void prepare(const std::string& name, const std::vector<int64_t>& shape);
  // Bytes of `name`'s state held now (Adam: its two fp32 moments).
  int64_t state_bytes(const std::string& name) const;
  // Updates `param` (named `name`) with its gradient `grad` of the same shape.
  void update(const std::string& name, Tensor& param, const Tensor& grad);

 private:
  struct Moments {
    Tensor m;  // first moment, param's shape
    Tensor v;  // second moment, param's shape
  };
  OptimizerKind kind_;
  double lr_;                              // learning rate
  int step_ = 0;                           // steps begun
  std::map<std::string, Moments> moments_;  // Adam state by parameter name
};

}  // namespace shardsynth::runtime
