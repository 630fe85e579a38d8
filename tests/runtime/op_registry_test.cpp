// The op kinds are declared once, in ir's op table; every other table keyed
// by kind is checked against it here: the CPU forward and backward kernels
// (or runtime/op_coverage.hpp's declaration that a kind is not executed),
// and under CUDA the GPU kernels or runtime/cuda/cpu_fallbacks.hpp's
// declared fallbacks. The exporter's mapping is checked against the same
// table by tests/python/op_registry_check.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ir/op_table.hpp"
#include "runtime/backward.hpp"
#include "runtime/cuda/cpu_fallbacks.hpp"
#include "runtime/op_coverage.hpp"
#include "runtime/reference.hpp"
#ifdef SHARDSYNTH_HAVE_CUDA
#include "runtime/cuda/cuda_backward.hpp"
#include "runtime/cuda/cuda_kernels.hpp"
#endif

namespace shardsynth::runtime {
namespace {

std::set<std::string> table_kinds() {
  std::set<std::string> kinds;
  for (const auto& [kind, info] : ir::op_table()) {
    if (!ir::is_boundary(kind)) kinds.insert(kind);
  }
  return kinds;
}

std::set<std::string> executed_kinds() {
  std::set<std::string> kinds = table_kinds();
  for (const auto& u : kUnexecutedKinds) kinds.erase(std::string(u.kind));
  return kinds;
}

// A table's op kinds; graph boundaries (an output's identity kernel) are no op kinds.
template <typename Map>
std::set<std::string> keys(const Map& map) {
  std::set<std::string> out;
  for (const auto& [kind, fn] : map) {
    if (!ir::is_boundary(kind)) out.insert(kind);
  }
  return out;
}

template <typename Range>
std::set<std::string> listed(const Range& range) {
  std::set<std::string> out;
  for (const auto& kind : range) out.insert(std::string(kind));
  return out;
}

// `have` holds exactly `want`: each missing or stale kind is named.
void check_kinds(const std::set<std::string>& want, const std::set<std::string>& have, const std::string& what) {
  for (const auto& kind : want) {
    CAPTURE(what);
    CAPTURE(kind);
    CHECK_MESSAGE(have.count(kind) == 1, "op kind '", kind, "' has no ", what);
  }
  for (const auto& kind : have) {
    CAPTURE(what);
    CAPTURE(kind);
    CHECK_MESSAGE(want.count(kind) == 1, what, " keyed by '", kind, "', which the op table does not execute");
  }
}

TEST_CASE("op_registry_EveryExecutedKindHasCpuKernels") {
  check_kinds(executed_kinds(), keys(reference_kernels()), "CPU forward kernel");
  check_kinds(executed_kinds(), keys(reference_backward_kernels()), "CPU backward kernel");
}

TEST_CASE("op_registry_UnexecutedKindsAreInTheTableWithAReason") {
  const auto kinds = table_kinds();
  for (const auto& u : kUnexecutedKinds) {
    CAPTURE(u.kind);
    CHECK(kinds.count(std::string(u.kind)) == 1);
    CHECK(!u.reason.empty());
  }
}

#ifdef SHARDSYNTH_HAVE_CUDA
// Every executed kind runs on the GPU or is a declared CPU fallback, not both.
template <typename Map, typename Range>
void check_gpu_or_fallback(const Map& gpu, const Range& fallbacks, const std::string& what) {
  const auto on_gpu = keys(gpu);
  const auto on_cpu = listed(fallbacks);
  for (const auto& kind : executed_kinds()) {
    CAPTURE(what);
    CAPTURE(kind);
    CHECK_MESSAGE(on_gpu.count(kind) + on_cpu.count(kind) == 1, "op kind '", kind,
                  "' must have a GPU ", what, " or be listed in runtime/cuda/cpu_fallbacks.hpp, not both");
  }
  for (const auto& kind : on_cpu) CHECK(executed_kinds().count(kind) == 1);
}

TEST_CASE("op_registry_EveryKindRunsOnTheGpuOrIsADeclaredFallback") {
  check_gpu_or_fallback(cuda::gpu_kernels(), cuda::kForwardOnCpu, "forward kernel");
  check_gpu_or_fallback(cuda::gpu_backward_kernels(), cuda::kBackwardOnCpu, "backward kernel");
}
#endif

}  // namespace
}  // namespace shardsynth::runtime
