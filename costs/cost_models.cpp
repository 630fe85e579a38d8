// The registry of cost models (costs/cost_model.hpp's make_cost_model and
// cost_model_names): a new model is a CostModel subclass and one line here.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "costs/alpha_beta_cost_model.hpp"
#include "costs/cost_model.hpp"
#include "costs/slapo_cost_model.hpp"
#include "ir/error.hpp"

namespace shardsynth::costs {

namespace {

// Every cost model by name: one line each.
const std::vector<std::pair<std::string, std::function<std::unique_ptr<CostModel>()>>>& registry() {
  static const std::vector<std::pair<std::string, std::function<std::unique_ptr<CostModel>()>>> models = {
      {"alpha-beta", [] { return std::make_unique<AlphaBetaCostModel>(); }},
      {"slapo", [] { return std::make_unique<SlapoCostModel>(); }},
  };
  return models;
}

}  // namespace

std::vector<std::string> cost_model_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : registry()) names.push_back(name);
  return names;
}

std::unique_ptr<CostModel> make_cost_model(std::string_view name) {
  for (const auto& [known_name, make] : registry()) {
    if (known_name == name) return make();
  }
  std::string known;
  for (const auto& n : cost_model_names()) known += (known.empty() ? "" : ", ") + n;
  throw ir::InputError("unknown cost model '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace shardsynth::costs
