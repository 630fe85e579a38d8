#pragma once
// The CUDA backend's backward table: the same op kinds and BackwardFn
// signature as reference_backward_kernels() (runtime/backward.hpp), on host
// Tensors, like the forward table of cuda_kernels.hpp.
//
// On the GPU (copy operands and the output gradient host -> device, run,
// copy the gradients back):
//   - cuBLAS (cublas_gemm.hpp): linear and conv1d (dx, dW by two GEMMs, the
//     bias gradient as dy^T times a ones vector) and matmul (strided batched
//     where each gradient matrix is written once, else one accumulating GEMM
//     per product, which sums a broadcast operand's gradient);
//   - small CUDA kernels (elementwise_backward.cu): gelu, gelu_tanh, relu, scale.
// Everything else falls back to the CPU entry of reference_backward_kernels(),
// as do degenerate shapes (an extent of 0).
#include <map>
#include <string>

#include "runtime/backward.hpp"

namespace shardsynth::runtime::cuda {

// The op kinds whose backward runs on the GPU (a subset of the table's keys).
const std::map<std::string, BackwardFn>& gpu_backward_kernels();

// op kind -> backward kernel, for every kind reference_backward_kernels() has.
const std::map<std::string, BackwardFn>& cuda_backward_kernels();

}  // namespace shardsynth::runtime::cuda
