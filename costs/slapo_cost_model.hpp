#pragma once
// The Slapo PR's volume cost model (`--cost-model slapo`).
//
// Specs cover the last two tensor dims on a 1-D mesh of p devices: RR, RS, SR.
// V is the product of those two dims of the global tensor, and costs count
// elements, rounded down:
//   all_gather (RS->RR, SR->RR)       V / p
//   all_to_all (RS<->SR)              V (p-1) / p^2   = (1/p - 1/p^2) V
//   all_reduce (partial -> RR)        V               (RSxSR matmul output)
//   reduce_scatter (partial -> S)     V (p-1) / p     (all_reduce minus its all_gather)
//   slice (RR -> RS, RR -> SR)        0
// Ops with a reduction factor must shard one factor (RR x RR is illegal:
// replicating everything would otherwise cost 0), graph inputs arrive
// replicated, outputs end replicated, partial results are all-reduced inside
// the op, and compute is free.
#include "costs/cost_model.hpp"

namespace shardsynth::costs {

class SlapoCostModel final : public CostModel {
 public:
  std::string name() const override { return "slapo"; }
  std::string unit() const override { return "elements"; }
  ir::SpecSpace spec_space(const ir::Mesh& mesh) const override;
  bool resolves_partial_in_op() const override { return true; }
  bool shards_graph_inputs() const override { return false; }
  bool replicated_outputs() const override { return true; }
  int64_t compute_cost(double, ir::DType, const ir::Mesh&) const override { return 0; }
  int64_t collective_cost(const Collective& step, const ir::TensorType& tensor, const ir::Spec& before,
                          const ir::Mesh& mesh) const override;
};

}  // namespace shardsynth::costs
