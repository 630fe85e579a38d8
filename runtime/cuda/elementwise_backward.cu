// The CUDA backend's elementwise backward kernels (see elementwise_backward.hpp).
#include "runtime/cuda/elementwise_backward.hpp"

namespace shardsynth::runtime::cuda {
namespace {

constexpr int kBackwardThreads = 256;

// The derivative of op at v.
__device__ float slope(UnaryOp op, float v, float divisor) {
  switch (op) {
    case UnaryOp::gelu: {
      const float cdf = 0.5f * (1.0f + erff(v * 0.70710678118654752f));  // Phi(v)
      const float pdf = 0.39894228040143268f * expf(-0.5f * v * v);       // phi(v) = exp(-v^2/2) / sqrt(2 pi)
      return cdf + v * pdf;
    }
    case UnaryOp::gelu_tanh: {
      const float c = 0.79788456080286536f;  // sqrt(2/pi)
      const float t = tanhf(c * (v + 0.044715f * v * v * v));
      return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * c * (1.0f + 3.0f * 0.044715f * v * v);
    }
    case UnaryOp::relu: return v > 0.0f ? 1.0f : 0.0f;
    case UnaryOp::scale: return 1.0f / divisor;
    case UnaryOp::silu: {
      const float s = 1.0f / (1.0f + expf(-v));
      return s * (1.0f + v * (1.0f - s));
    }
  }
  return 0.0f;
}

__global__ void unary_backward_kernel(UnaryOp op, const float* x, const float* dy, float* dx, int64_t n, float divisor) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  dx[i] = op == UnaryOp::scale ? dy[i] / divisor : dy[i] * slope(op, x[i], divisor);
}

}  // namespace

cudaError_t launch_unary_backward(UnaryOp op, const float* x, const float* dy, float* dx, int64_t n, float divisor) {
  if (n > 0) {
    const auto blocks = static_cast<unsigned>((n + kBackwardThreads - 1) / kBackwardThreads);
    unary_backward_kernel<<<blocks, kBackwardThreads>>>(op, x, dy, dx, n, divisor);
  }
  return cudaGetLastError();
}

}  // namespace shardsynth::runtime::cuda
