#include "costs/cost_model.hpp"

#include <algorithm>


namespace shardsynth::costs {

std::optional<int64_t> CostModel::reshard_cost(const ir::TensorType& tensor, const ir::Spec& from, const ir::Spec& to,
                                               const ir::Mesh& mesh) const {
  auto plan = plan_resharding(from, to, mesh);
  if (!plan) return std::nullopt;
  int64_t total = 0;
  ir::Spec current = from;
  for (const auto& step : *plan) {
    total += collective_cost(step, tensor, current, mesh);
    current = apply(step, current);
  }
  return total;
}

}  // namespace shardsynth::costs
