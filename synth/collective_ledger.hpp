#pragma once
// The collectives a plan prices, one by one: what a run that executes the
// plan as priced sends (the Python binding's `collectives`; the DTensor
// check holds PyTorch's CommDebugMode to it). The list is read off the
// pricing itself: the chosen strategies' edge, op, storage and tied-parameter
// moves (costs::edge_moves, op_moves, storage_moves, tied_param_moves, the
// lists whose sums are their costs), with the same arguments lowering prices
// them with, each expanded into costs::plan_resharding's steps. So nothing
// here restates which moves a plan makes.
#include <cstdint>
#include <string>
#include <vector>

#include "costs/collective.hpp"
#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "ir/spec.hpp"
#include "synth/lowered.hpp"

namespace shardsynth::synth {

struct PricedCollective {
  costs::Collective step;    // kind and mesh axis (slices are left out: they send nothing)
  costs::Phase phase = costs::Phase::forward;  // when it runs (an inference plan: forward only)
  int64_t bytes = 0;         // bytes one device sends: costs::ring_bytes_sent on the spec before the step
  int64_t elements = 0;      // elements of the local buffer the collective starts from (one device)
  int64_t cost = 0;          // its price in the cost model's unit (CostModel::collective_cost)
  std::string tensor;        // what moves: a node's output (`node`), a parameter or its gradient (`node.param`)
  std::string move;          // the move this step belongs to, "FROM->TO" in spec text (docs/schedule_json.md)
};

// Every collective of one step of assignment `a` of `lowered` (one forward
// pass for an inference plan; forward, backward and optimizer for a
// training plan), in the order: operand edges, ops, tied uses, stored
// parameters, each priced by `model` (the model that lowered the plan: the
// prices sum to the plan's cost less its compute).
std::vector<PricedCollective> plan_collectives(const Lowered& lowered, const Assignment& a, const costs::CostModel& model);

// "forward", "backward", "optimizer".
std::string phase_name(costs::Phase phase);

}  // namespace shardsynth::synth
