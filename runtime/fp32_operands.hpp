#pragma once
// Kernels read fp32: the one place where a 16-bit operand (runtime/half.hpp,
// Tensor::bits) is widened for a kernel, so that no kernel converts on its
// own. A wrapped kernel sees each 16-bit input, parameter, saved output and
// incoming gradient as fp32 scratch held for the call alone, computes and
// accumulates in fp32, and returns fp32; the executor rounds the result once
// into its dtype's storage (ForwardPass::step, TrainingState::backward_op).
// Calls whose operands are all fp32 run the kernel directly, with no copy.
#include <map>
#include <set>
#include <string>

#include "runtime/backward.hpp"
#include "runtime/reference.hpp"

namespace shardsynth::runtime {

// `kernel`, reading its 16-bit operands widened to fp32. With
// `weight_by_tiles` the "weight" parameter is passed as it is stored: the
// kernel reads it by tiles through the widening loader (fp32_block,
// runtime/half.hpp; cpu_gemm_weight), so a large 16-bit weight is never
// widened whole.
KernelFn with_fp32_operands(KernelFn kernel, bool weight_by_tiles = false);
BackwardFn with_fp32_operands(BackwardFn kernel, bool weight_by_tiles = false);

// The kinds whose CPU kernels, forward and backward, read a 16-bit weight
// by tiles (kernels_dense.cpp, kernels_backward_dense.cpp; embedding's
// backward reads only its shape).
inline const std::set<std::string> kWeightByTileKinds = {"linear", "conv1d", "embedding"};

// Every entry of `table` wrapped by with_fp32_operands, except the kinds in
// `reads_bits` (kernels that read 16-bit storage themselves: the CUDA
// GEMMs); the kinds in `weight_by_tiles` read their weight by tiles.
template <typename Fn>
std::map<std::string, Fn> with_fp32_operands(std::map<std::string, Fn> table, const std::set<std::string>& reads_bits = {},
                                             const std::set<std::string>& weight_by_tiles = {}) {
  for (auto& [kind, fn] : table) {
    if (!reads_bits.count(kind)) fn = with_fp32_operands(std::move(fn), weight_by_tiles.count(kind) > 0);
  }
  return table;
}

}  // namespace shardsynth::runtime
