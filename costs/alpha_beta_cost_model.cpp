#include "costs/alpha_beta_cost_model.hpp"

#include <cmath>

namespace shardsynth::costs {

ir::SpecSpace AlphaBetaCostModel::spec_space(const ir::Mesh&) const { return ir::SpecSpace{-1, false, true}; }

int64_t AlphaBetaCostModel::compute_cost(double flops, const ir::Mesh& mesh) const {
  return std::llround(flops / (mesh.peak_tflops * 1000.0));
}

double ring_bytes(CollectiveKind kind, int64_t n, double m) {
  const double k = static_cast<double>(n);
  switch (kind) {
    case CollectiveKind::slice: return 0;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return (k - 1) / k * m;
    case CollectiveKind::all_reduce: return 2 * (k - 1) / k * m;
    case CollectiveKind::all_to_all: return (k - 1) / (k * k) * m;
  }
  return 0;
}

int64_t ring_steps(CollectiveKind kind, int64_t n) {
  switch (kind) {
    case CollectiveKind::slice: return 0;
    case CollectiveKind::all_reduce: return 2 * (n - 1);
    default: return n - 1;
  }
}

int64_t AlphaBetaCostModel::collective_cost(const Collective& step, const ir::TensorType& tensor, const ir::Spec& before,
                                            const ir::Mesh& mesh) const {
  const int64_t n = mesh.shape.at(step.mesh_axis);
  if (n == 1 || step.kind == CollectiveKind::slice) return 0;
  const double local = static_cast<double>(ir::num_elements(ir::local_shape(tensor.shape, before, mesh))) *
                       static_cast<double>(ir::dtype_bytes(tensor.dtype));
  // The ring's buffer: the local size with this axis's split undone, except
  // for partial sums, whose local buffer is already whole.
  const bool gathers = step.kind == CollectiveKind::all_gather || step.kind == CollectiveKind::all_to_all;
  const double m = gathers ? local * static_cast<double>(n) : local;
  const double transfer_ns = ring_bytes(step.kind, n, m) / mesh.bandwidth_gbps.at(step.mesh_axis);
  const double latency_ns = static_cast<double>(ring_steps(step.kind, n)) * mesh.latency_us.at(step.mesh_axis) * 1000.0;
  return std::llround(transfer_ns + latency_ns);
}

}  // namespace shardsynth::costs
