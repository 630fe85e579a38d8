#pragma once
// The alpha-beta cost model (`--cost-model alpha-beta`, the default): costs
// are nanoseconds on the mesh's links and devices.
//
// A collective over mesh axis a with n devices, link bandwidth B_a (GB/s =
// bytes/ns) and per-step latency alpha_a, on a buffer of M bytes per device
// (M = the tensor's local size with axis a's sharding undone, i.e. the full
// buffer the ring works on), runs as a ring:
//   all_gather      (n-1) alpha + (n-1)/n   M / B
//   reduce_scatter  (n-1) alpha + (n-1)/n   M / B
//   all_reduce     2(n-1) alpha + 2(n-1)/n M / B
//   all_to_all      (n-1) alpha + (n-1)/n^2 M / B   (M summed over the axis)
//   slice           0
// These are nccl-tests' bus-bandwidth factors. Each step is priced on the
// local size it sees, as plan_resharding applies them in order. Compute:
// flops / (peak TFLOP/s x 1000) ns. Every term is rounded to the nearest
// nanosecond on its own, so costs are integers and sums are exact.
//
// Specs cover every tensor dim on any mesh, blocked dims included; graph
// inputs may arrive sharded, outputs may stay sharded (not partial), and
// partial results are resolved by their consumers' resharding.
#include "costs/cost_model.hpp"

namespace shardsynth::costs {

class AlphaBetaCostModel final : public CostModel {
 public:
  std::string name() const override { return "alpha-beta"; }
  std::string unit() const override { return "ns"; }
  ir::SpecSpace spec_space(const ir::Mesh& mesh) const override;
  bool resolves_partial_in_op() const override { return false; }
  bool shards_graph_inputs() const override { return true; }
  bool replicated_outputs() const override { return false; }
  int64_t compute_cost(double flops, ir::DType dtype, const ir::Mesh& mesh) const override;
  int64_t collective_cost(const Collective& step, const ir::TensorType& tensor, const ir::Spec& before,
                          const ir::Mesh& mesh) const override;
};

// Bytes one device sends in a ring collective of `kind` over n devices on a
// buffer of `m` bytes (M above). Zero for slice.
double ring_bytes(CollectiveKind kind, int64_t n, double m);
// Bytes one rank sends for `step` on a tensor of global type `tensor` laid
// out as `before`, in exact integers (L = the rank's local bytes, n = the
// axis' extent): all_gather (n-1) L, reduce_scatter and all_to_all (n-1) L / n,
// all_reduce floor(2 (n-1) L / n), slice 0. This is ring_bytes on the ring's
// buffer, and what the runtime's communicators count.
int64_t ring_bytes_sent(const Collective& step, const ir::TensorType& tensor, const ir::Spec& before,
                        const ir::Mesh& mesh);
// The same for a group of n ranks each holding `local_bytes` (what the
// runtime's communicators count); 0 for a group of one and for slice.
int64_t ring_bytes_sent(CollectiveKind kind, int64_t n, int64_t local_bytes);
// Ring steps, each paying the axis latency once.
int64_t ring_steps(CollectiveKind kind, int64_t n);

}  // namespace shardsynth::costs
