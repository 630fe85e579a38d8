#pragma once
// Packs the VJP results of runtime/kernels_backward.hpp into the Gradients a
// backward kernel returns (runtime/backward.hpp); shared by the CPU and the
// CUDA backward tables.
#include "runtime/backward.hpp"
#include "runtime/kernels_backward.hpp"

namespace shardsynth::runtime {

// One tensor operand, no params.
Gradients input_gradient(Tensor dx);
// Two tensor operands (matmul, add), in operand order.
Gradients pair_gradients(PairGrads grads);
// linear / conv1d: the operand, "weight", and "bias" when the forward had one.
Gradients projection_gradients(ProjectionGrads grads);

// A linear / conv1d VJP with linear_backward's signature (a backend's own, or the CPU one).
using ProjectionVjp = ProjectionGrads (*)(const Tensor& x, const Tensor& weight, bool has_bias, const Tensor& dy);
// Runs `vjp` on the forward call's operand 0, "weight" and optional "bias"
// against the call's output gradient, and packs the result.
Gradients projection_backward_call(const BackwardCall& call, ProjectionVjp vjp);

}  // namespace shardsynth::runtime
