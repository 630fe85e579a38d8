#pragma once
// The CUDA backend's kernel table: the same op kinds and KernelFn signature
// as reference_kernels() (runtime/reference.hpp), on host Tensors.
//
// On the GPU (copy the operands host -> device, run, copy the result back):
//   - cuBLAS: linear, conv1d (cublasSgemm plus a bias kernel) and matmul
//     (cublasSgemmStridedBatched when the broadcast batch offsets are
//     regular, else one cublasSgemm per batch);
//   - small CUDA kernels (elementwise.cu): gelu, gelu_tanh, relu, scale,
//     add of equal shapes, causal_mask (offsets from KernelCall.in_offsets,
//     as the CPU table).
// Everything else falls back to the CPU kernel of reference_kernels(): the
// layout ops (view, permute, transpose, split), embedding, layernorm,
// softmax, dropout, output, and add with broadcasting.
//
// bfloat16/float16 operands of linear, conv1d and matmul are uploaded from
// their 16-bit storage (Tensor::bits) as they are, for cuBLAS's 16-bit GEMMs
// with fp32 accumulation; every other entry reads them widened to fp32
// (runtime/fp32_operands.hpp).
//
// Kernels use the current CUDA device (NcclCommunicator selects it) and one
// cuBLAS handle per thread, created on first use.
#include <map>
#include <string>

#include "runtime/reference.hpp"

namespace shardsynth::runtime::cuda {

// The op kinds run on the GPU (a subset of the table's keys).
const std::map<std::string, KernelFn>& gpu_kernels();

// op kind -> kernel, for every kind reference_kernels() has.
const std::map<std::string, KernelFn>& cuda_kernels();

}  // namespace shardsynth::runtime::cuda
