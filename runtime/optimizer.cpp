#include "runtime/optimizer.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "ir/error.hpp"

namespace shardsynth::runtime {
namespace {

constexpr double kBeta1 = 0.9;
constexpr double kBeta2 = 0.999;
constexpr double kEps = 1e-8;

}  // namespace

OptimizerKind parse_optimizer(std::string_view text) {
  if (text == "sgd") return OptimizerKind::sgd;
  if (text == "adam") return OptimizerKind::adam;
  throw ir::InputError("unknown optimizer '" + std::string(text) + "' (known: sgd, adam)");
}

std::string optimizer_name(OptimizerKind kind) { return kind == OptimizerKind::sgd ? "sgd" : "adam"; }

Optimizer::Optimizer(OptimizerKind kind, double lr) : kind_(kind), lr_(lr) {
  if (!(std::isfinite(lr) && lr > 0)) {
    std::ostringstream text;
    text << "--lr " << lr << ": must be a positive finite number";
    throw ir::InputError(text.str());
  }
}

void Optimizer::prepare(const std::string& name, const std::vector<int64_t>& shape) {
  if (kind_ == OptimizerKind::adam && !moments_.count(name)) moments_[name] = {zeros(shape), zeros(shape)};
}

int64_t Optimizer::state_bytes(const std::string& name) const {
  const auto it = moments_.find(name);
  if (it == moments_.end()) return 0;
  return static_cast<int64_t>((it->second.m.data.size() + it->second.v.data.size()) * sizeof(float));
}

void Optimizer::update(const std::string& name, Tensor& param, const Tensor& grad) {
  if (param.shape != grad.shape) throw std::invalid_argument("optimizer: gradient of '" + name + "' has the wrong shape");
  if (kind_ == OptimizerKind::sgd) {
    const auto lr = static_cast<float>(lr_);
    for (std::size_t i = 0; i < param.data.size(); ++i) param.data[i] -= lr * grad.data[i];
    return;
  }
  auto [it, fresh] = moments_.try_emplace(name);
  if (fresh) it->second = {zeros(param.shape), zeros(param.shape)};
  Moments& s = it->second;
  const double correction1 = 1.0 - std::pow(kBeta1, step_);
  const double correction2 = 1.0 - std::pow(kBeta2, step_);
  const auto step_size = static_cast<float>(lr_ / correction1);
  const auto root2 = static_cast<float>(std::sqrt(correction2));
  const auto b1 = static_cast<float>(kBeta1), b2 = static_cast<float>(kBeta2), eps = static_cast<float>(kEps);
  for (std::size_t i = 0; i < param.data.size(); ++i) {
    const float g = grad.data[i];
    s.m.data[i] = b1 * s.m.data[i] + (1.0f - b1) * g;
    s.v.data[i] = b2 * s.v.data[i] + (1.0f - b2) * g * g;
    param.data[i] -= step_size * s.m.data[i] / (std::sqrt(s.v.data[i]) / root2 + eps);
  }
}

}  // namespace shardsynth::runtime
