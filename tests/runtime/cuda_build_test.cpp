// Checks of the CUDA backend that need no GPU: it is registered and its
// kernel tables (forward and backward) cover the CPU tables. Built only with SHARDSYNTH_HAVE_CUDA.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "runtime/backend.hpp"
#include "runtime/backward.hpp"
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/cuda/cuda_backward.hpp"
#include "runtime/cuda/cuda_kernels.hpp"
#include "runtime/reference.hpp"

namespace shardsynth::runtime {
namespace {

TEST_CASE("cuda_backend_IsListed") {
  const auto names = backend_names();
  CHECK(std::find(names.begin(), names.end(), "cuda") != names.end());
  CHECK(std::find(names.begin(), names.end(), "cpu") != names.end());
}

// `table` has exactly the kinds of `reference`, each with a callable entry.
template <typename Fn>
void check_same_kinds(const std::map<std::string, Fn>& table, const std::map<std::string, Fn>& reference) {
  for (const auto& [kind, fn] : reference) {
    CAPTURE(kind);
    const auto it = table.find(kind);
    REQUIRE(it != table.end());
    CHECK(static_cast<bool>(it->second));
  }
  CHECK(table.size() == reference.size());
}

TEST_CASE("cuda_kernels_CoverEveryReferenceKind") { check_same_kinds(cuda::cuda_kernels(), reference_kernels()); }

TEST_CASE("cuda_kernels_RunGemmAndElementwiseKindsOnTheGpu") {
  const auto& on_gpu = cuda::gpu_kernels();
  for (const char* kind : {"linear", "conv1d", "matmul", "gelu", "gelu_tanh", "relu", "scale", "add", "causal_mask", "silu", "mul"}) {
    CAPTURE(kind);
    CHECK(on_gpu.count(kind) == 1);
  }
}

TEST_CASE("cuda_backward_kernels_CoverEveryReferenceKind") {
  check_same_kinds(cuda::cuda_backward_kernels(), reference_backward_kernels());
}

TEST_CASE("cuda_backward_kernels_RunGemmAndElementwiseKindsOnTheGpu") {
  const auto& on_gpu = cuda::gpu_backward_kernels();
  for (const char* kind : {"linear", "conv1d", "matmul", "gelu", "gelu_tanh", "relu", "scale", "silu"}) {
    CAPTURE(kind);
    CHECK(on_gpu.count(kind) == 1);
  }
  CHECK(on_gpu.size() == 8);
}

}  // namespace
}  // namespace shardsynth::runtime
