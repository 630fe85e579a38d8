#pragma once
// Point-to-point transfers between pipeline stages: a tensor that crosses a
// cut is sent once per micro-batch from every device of the producing group
// to the device at the same sub-mesh coordinates in the reading group, each
// device sending its own shard (the tensor's spec in the sending stage).
#include <cstdint>

#include "costs/cost_model.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::costs {

struct TransferCost {
  int64_t bytes = 0;     // bytes one device of the sending group sends, per micro-batch
  int64_t elements = 0;  // elements one device of the sending group sends, per micro-batch
  int64_t cost = 0;      // price per micro-batch in the model's unit
};

// The send of `tensor`, laid out as `spec` on the group sub-mesh `group`,
// across axis 0 of `mesh` (the axis that indexes stages). A model whose unit
// is "elements" (a volume model) is charged the elements sent; any time unit
// is charged latency + bytes / bandwidth of axis 0 (one step, like a ring
// step of that axis), rounded up to a whole nanosecond.
TransferCost transfer_cost(const CostModel& model, const ir::TensorType& tensor, const ir::Spec& spec,
                           const ir::Mesh& group, const ir::Mesh& mesh);

}  // namespace shardsynth::costs
