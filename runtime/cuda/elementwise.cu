// The CUDA backend's elementwise kernels (see elementwise.hpp).
#include <cfloat>

#include "runtime/cuda/elementwise.hpp"

namespace shardsynth::runtime::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

__global__ void unary_kernel(UnaryOp op, const float* x, float* y, int64_t n, float divisor) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  switch (op) {
    case UnaryOp::gelu: y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); break;
    case UnaryOp::gelu_tanh: {
      const float c = 0.79788456080286536f;  // sqrt(2/pi)
      y[i] = 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
      break;
    }
    case UnaryOp::relu: y[i] = fmaxf(v, 0.0f); break;
    case UnaryOp::scale: y[i] = v / divisor; break;
    case UnaryOp::silu: y[i] = v / (1.0f + expf(-v)); break;
  }
}

__global__ void add_kernel(const float* a, const float* b, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] + b[i];
}

__global__ void mul_kernel(const float* a, const float* b, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a[i] * b[i];
}

__global__ void add_bias_kernel(float* y, const float* bias, int64_t rows, int64_t width) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows * width) y[i] += bias[i % width];
}

__global__ void causal_mask_kernel(float* x, int64_t total, int64_t q, int64_t k, int64_t q_offset, int64_t k_offset) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= total) return;
  const int64_t j = t % k, i = (t / k) % q;
  if (k_offset + j > q_offset + i) x[t] = -FLT_MAX;
}

}  // namespace

cudaError_t launch_unary(UnaryOp op, const float* x, float* y, int64_t n, float divisor) {
  if (n > 0) unary_kernel<<<blocks_for(n), kThreads>>>(op, x, y, n, divisor);
  return cudaGetLastError();
}

cudaError_t launch_add(const float* a, const float* b, float* y, int64_t n) {
  if (n > 0) add_kernel<<<blocks_for(n), kThreads>>>(a, b, y, n);
  return cudaGetLastError();
}

cudaError_t launch_mul(const float* a, const float* b, float* y, int64_t n) {
  if (n > 0) mul_kernel<<<blocks_for(n), kThreads>>>(a, b, y, n);
  return cudaGetLastError();
}

cudaError_t launch_add_bias(float* y, const float* bias, int64_t rows, int64_t width) {
  if (rows * width > 0) add_bias_kernel<<<blocks_for(rows * width), kThreads>>>(y, bias, rows, width);
  return cudaGetLastError();
}

cudaError_t launch_causal_mask(float* x, int64_t mats, int64_t q, int64_t k, int64_t q_offset, int64_t k_offset) {
  const int64_t total = mats * q * k;
  if (total > 0) causal_mask_kernel<<<blocks_for(total), kThreads>>>(x, total, q, k, q_offset, k_offset);
  return cudaGetLastError();
}

}  // namespace shardsynth::runtime::cuda
