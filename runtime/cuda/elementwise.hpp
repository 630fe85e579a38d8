#pragma once
// Launchers of the CUDA backend's small elementwise kernels (elementwise.cu),
// on raw device pointers so nvcc compiles nothing but this file's .cu. Each
// launches on the default stream and returns cudaGetLastError(); callers
// check it with SHARDSYNTH_CUDA_CHECK. Semantics match runtime/kernels.hpp.
#include <cuda_runtime.h>

#include <cstdint>

namespace shardsynth::runtime::cuda {

enum class UnaryOp { gelu, gelu_tanh, relu, scale, silu };

// y[i] = op(x[i]) for i < n; `divisor` is used by scale only (y = x / divisor).
cudaError_t launch_unary(UnaryOp op, const float* x, float* y, int64_t n, float divisor);
// y[i] = a[i] + b[i] for i < n.
cudaError_t launch_add(const float* a, const float* b, float* y, int64_t n);
// y[i] = a[i] * b[i] for i < n.
cudaError_t launch_mul(const float* a, const float* b, float* y, int64_t n);
// y[r, j] += bias[j] for r < rows, j < width.
cudaError_t launch_add_bias(float* y, const float* bias, int64_t rows, int64_t width);
// On `mats` row-major [q, k] score matrices: entry (i, j) becomes the lowest
// finite float when k_offset + j > q_offset + i.
cudaError_t launch_causal_mask(float* x, int64_t mats, int64_t q, int64_t k, int64_t q_offset, int64_t k_offset);

}  // namespace shardsynth::runtime::cuda
