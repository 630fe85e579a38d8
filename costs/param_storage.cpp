#include "costs/param_storage.hpp"

#include <algorithm>

namespace shardsynth::costs {

std::vector<Move> storage_moves(const ParamStorage& storage, const OperandUse& use, const PrecisionPolicy& policy) {
  const ir::TensorType grad{use.type.shape, reduce_dtype(policy, use.type.dtype)};
  ir::Spec contracted = use.spec;
  contracted.partial.insert(contracted.partial.end(), use.grad_partial.begin(), use.grad_partial.end());
  std::sort(contracted.partial.begin(), contracted.partial.end());
  return {{use.type, storage.stored, use.spec, Phase::forward},
          {use.type, storage.stored, use.spec, Phase::backward},
          {grad, contracted, storage.grad, Phase::backward},
          {grad, storage.grad, storage.state, Phase::optimizer},
          {use.type, storage.state, storage.stored, Phase::optimizer}};
}

std::optional<int64_t> storage_cost(const CostModel& model, const ParamStorage& storage, const OperandUse& use,
                                    const ir::Mesh& mesh, const PrecisionPolicy& policy) {
  return moves_cost(model, storage_moves(storage, use, policy), mesh);
}

StorageBytes storage_bytes(const ir::TensorType& type, const ParamStorage& storage, const ir::Mesh& mesh,
                           const PrecisionPolicy& policy) {
  auto elements = [&](const ir::Spec& spec) { return ir::num_elements(ir::local_shape(type.shape, spec, mesh)); };
  return {elements(storage.stored) * ir::dtype_bytes(type.dtype),
          elements(storage.grad) * ir::dtype_bytes(reduce_dtype(policy, type.dtype)),
          elements(storage.state) * optimizer_bytes_per_element(policy, type.dtype)};
}

}  // namespace shardsynth::costs
