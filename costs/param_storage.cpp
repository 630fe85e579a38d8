#include "costs/param_storage.hpp"

#include <algorithm>

namespace shardsynth::costs {

std::optional<int64_t> storage_cost(const CostModel& model, const ParamStorage& storage, const OperandUse& use,
                                    const ir::Mesh& mesh, const PrecisionPolicy& policy) {
  const ir::TensorType grad{use.type.shape, reduce_dtype(policy, use.type.dtype)};
  ir::Spec contracted = use.spec;
  contracted.partial.insert(contracted.partial.end(), use.grad_partial.begin(), use.grad_partial.end());
  std::sort(contracted.partial.begin(), contracted.partial.end());
  const auto gather = model.reshard_cost(use.type, storage.stored, use.spec, mesh);
  const auto reduce = model.reshard_cost(grad, contracted, storage.grad, mesh);
  const auto slice = model.reshard_cost(grad, storage.grad, storage.state, mesh);
  const auto update = model.reshard_cost(use.type, storage.state, storage.stored, mesh);
  if (!gather || !reduce || !slice || !update) return std::nullopt;
  return 2 * *gather + *reduce + *slice + *update;
}

StorageBytes storage_bytes(const ir::TensorType& type, const ParamStorage& storage, const ir::Mesh& mesh,
                           const PrecisionPolicy& policy) {
  auto elements = [&](const ir::Spec& spec) { return ir::num_elements(ir::local_shape(type.shape, spec, mesh)); };
  return {elements(storage.stored) * ir::dtype_bytes(type.dtype),
          elements(storage.grad) * ir::dtype_bytes(reduce_dtype(policy, type.dtype)),
          elements(storage.state) * optimizer_bytes_per_element(policy, type.dtype)};
}

}  // namespace shardsynth::costs
