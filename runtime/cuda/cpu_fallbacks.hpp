#pragma once
// The op kinds whose CUDA kernels fall back to the CPU ones (the data comes
// back to the host, runs there, and goes to the device again): declared, so
// that a new kind without a GPU kernel is a decision, not an omission.
// Every kind the CPU tables run is either in the GPU tables
// (cuda_kernels.cpp, cuda_backward.cpp) or listed here, never both
// (tests/runtime/op_registry_test.cpp). Header only, so the test reads it
// without the toolkit too.
#include <string_view>

namespace shardsynth::runtime::cuda {

// Forward kernels that run on the CPU under the cuda backend.
inline constexpr std::string_view kForwardOnCpu[] = {
    "cross_entropy", "dropout", "embedding", "layernorm", "permute", "repeat_kv", "rms_norm",
    "rotary",  "softmax",   "split",     "transpose", "view",
};

// Backward kernels that run on the CPU under the cuda backend.
inline constexpr std::string_view kBackwardOnCpu[] = {
    "add",      "causal_mask", "cross_entropy", "dropout", "embedding", "layernorm", "mul",       "permute",
    "repeat_kv", "rms_norm",   "rotary",  "softmax",   "split",     "transpose", "view",
};

}  // namespace shardsynth::runtime::cuda
