#include "costs/cost_model.hpp"

#include <algorithm>

#include "costs/alpha_beta_cost_model.hpp"
#include "costs/slapo_cost_model.hpp"
#include "ir/error.hpp"

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

std::vector<std::string> cost_model_names() { return {"alpha-beta", "slapo"}; }

std::unique_ptr<CostModel> make_cost_model(std::string_view name) {
  if (name == "slapo") return std::make_unique<SlapoCostModel>();
  if (name == "alpha-beta") return std::make_unique<AlphaBetaCostModel>();
  std::string known;
  for (const auto& n : cost_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw ir::InputError("unknown cost model '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace shardsynth::costs
