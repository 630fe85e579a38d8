#include "runtime/gradients.hpp"

#include <utility>

namespace shardsynth::runtime {

Gradients input_gradient(Tensor dx) {
  Gradients g;
  g.inputs.emplace_back(std::move(dx));
  return g;
}

Gradients pair_gradients(PairGrads grads) {
  Gradients g;
  g.inputs.emplace_back(std::move(grads.a));
  g.inputs.emplace_back(std::move(grads.b));
  return g;
}

Gradients projection_gradients(ProjectionGrads grads) {
  Gradients g = input_gradient(std::move(grads.x));
  g.params.emplace("weight", std::move(grads.weight));
  if (grads.bias) g.params.emplace("bias", std::move(*grads.bias));
  return g;
}

Gradients projection_backward_call(const BackwardCall& call, ProjectionVjp vjp) {
  const KernelCall& f = call.forward;
  return projection_gradients(vjp(input(f, 0), param(f, "weight"), optional_param(f, "bias") != nullptr, call.grad_output));
}

}  // namespace shardsynth::runtime
