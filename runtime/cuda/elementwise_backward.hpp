#pragma once
// Launcher of the CUDA backend's elementwise backward kernels
// (elementwise_backward.cu), on raw device pointers like elementwise.hpp:
// launches on the default stream and returns cudaGetLastError(), which
// callers check with SHARDSYNTH_CUDA_CHECK. Semantics match
// runtime/kernels_backward.hpp.
#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/cuda/elementwise.hpp"

namespace shardsynth::runtime::cuda {

// dx[i] = dy[i] * op'(x[i]) for i < n: gelu (exact erf), gelu_tanh (NewGELU),
// relu (0 at x <= 0), silu, scale (dy / divisor; x is not read).
cudaError_t launch_unary_backward(UnaryOp op, const float* x, const float* dy, float* dx, int64_t n, float divisor);

}  // namespace shardsynth::runtime::cuda
