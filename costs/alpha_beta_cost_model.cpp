#include "costs/alpha_beta_cost_model.hpp"

#include <cmath>

namespace shardsynth::costs {

ir::SpecSpace AlphaBetaCostModel::spec_space(const ir::Mesh&) const { return ir::SpecSpace{-1, false, true}; }

int64_t AlphaBetaCostModel::compute_cost(double flops, ir::DType dtype, const ir::Mesh& mesh) const {
  return std::llround(flops / (ir::peak_tflops(mesh, dtype) * 1000.0));
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

int64_t ring_bytes_sent(CollectiveKind kind, int64_t n, int64_t local_bytes) {
  if (n <= 1) return 0;
  switch (kind) {
    case CollectiveKind::slice: return 0;
    case CollectiveKind::all_gather: return (n - 1) * local_bytes;
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (n - 1) * local_bytes / n;
    case CollectiveKind::all_reduce: return 2 * (n - 1) * local_bytes / n;
  }
  return 0;
}

int64_t ring_bytes_sent(const Collective& step, const ir::TensorType& tensor, const ir::Spec& before,
                        const ir::Mesh& mesh) {
  const int64_t local = ir::num_elements(ir::local_shape(tensor.shape, before, mesh)) * ir::dtype_bytes(tensor.dtype);
  return ring_bytes_sent(step.kind, mesh.shape.at(step.mesh_axis), local);
}

int64_t AlphaBetaCostModel::collective_cost(const Collective& step, const ir::TensorType& tensor, const ir::Spec& before,
                                            const ir::Mesh& mesh) const {
  const int64_t n = mesh.shape.at(step.mesh_axis);
  if (n == 1 || step.kind == CollectiveKind::slice) return 0;
  const double transfer_ns =
      static_cast<double>(ring_bytes_sent(step, tensor, before, mesh)) / mesh.bandwidth_gbps.at(step.mesh_axis);
  const double latency_ns = static_cast<double>(ring_steps(step.kind, n)) * mesh.latency_us.at(step.mesh_axis) * 1000.0;
  return std::llround(transfer_ns + latency_ns);
}

}  // namespace shardsynth::costs
