#include "costs/param_storage.hpp"

#include <algorithm>

namespace shardsynth::costs {
namespace {

constexpr int64_t kAdamStateBytes = 2 * 4;  // two fp32 moments per element

}  // namespace

std::optional<int64_t> storage_cost(const CostModel& model, const ParamStorage& storage, const OperandUse& use,
                                    const ir::Mesh& mesh) {
  ir::Spec contracted = use.spec;
  contracted.partial.insert(contracted.partial.end(), use.grad_partial.begin(), use.grad_partial.end());
  std::sort(contracted.partial.begin(), contracted.partial.end());
  const auto gather = model.reshard_cost(use.type, storage.stored, use.spec, mesh);
  const auto reduce = model.reshard_cost(use.type, contracted, storage.grad, mesh);
  const auto slice = model.reshard_cost(use.type, storage.grad, storage.state, mesh);
  const auto update = model.reshard_cost(use.type, storage.state, storage.stored, mesh);
  if (!gather || !reduce || !slice || !update) return std::nullopt;
  return 2 * *gather + *reduce + *slice + *update;
}

StorageBytes storage_bytes(const ir::TensorType& type, const ParamStorage& storage, const ir::Mesh& mesh) {
  auto elements = [&](const ir::Spec& spec) { return ir::num_elements(ir::local_shape(type.shape, spec, mesh)); };
  const int64_t width = ir::dtype_bytes(type.dtype);
  return {elements(storage.stored) * width, elements(storage.grad) * width, elements(storage.state) * kAdamStateBytes};
}

}  // namespace shardsynth::costs
