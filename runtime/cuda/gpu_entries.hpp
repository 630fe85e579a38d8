#pragma once
// How the CUDA backend builds each of its tables (forward, cuda_kernels.cpp;
// backward, cuda_backward.cpp): the CPU table with the GPU entries over it.
#include <map>
#include <string>

namespace shardsynth::runtime::cuda {

// `cpu` (the fallbacks) with every entry of `gpu` put in place of the CPU one.
template <typename Fn>
std::map<std::string, Fn> with_gpu_entries(std::map<std::string, Fn> cpu, const std::map<std::string, Fn>& gpu) {
  for (const auto& [kind, fn] : gpu) cpu[kind] = fn;
  return cpu;
}

}  // namespace shardsynth::runtime::cuda
