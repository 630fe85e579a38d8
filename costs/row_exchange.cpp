#include "costs/row_exchange.hpp"

#include <algorithm>

namespace shardsynth::costs {

RowExchange row_exchange(int64_t rows, const std::vector<int>& axes, const ir::Mesh& mesh) {
  int64_t shards = 1;
  for (int axis : axes) shards *= mesh.shape.at(axis);
  RowExchange exchange{{{rows, 2 * shards}, ir::DType::float32}, ir::replicated(2), ir::replicated(2)};
  exchange.from.dims[1] = axes;
  return exchange;
}

std::optional<int64_t> row_exchange_cost(const CostModel& model, Mode mode, int64_t rows, const std::vector<int>& axes,
                                         const ir::Mesh& mesh) {
  if (axes.empty()) return 0;
  const RowExchange exchange = row_exchange(rows, axes, mesh);
  const auto once = model.reshard_cost(exchange.type, exchange.from, exchange.to, mesh);
  if (!once) return std::nullopt;
  return mode == Mode::training ? 2 * *once : *once;
}

std::optional<int64_t> op_exchange_cost(const CostModel& model, Mode mode, const ir::ShardingRule& rule,
                                        std::string_view normalized, const std::vector<std::vector<int>>& factor_axes,
                                        const ir::Mesh& mesh) {
  if (normalized.empty()) return 0;
  std::vector<int> axes;
  int64_t rows = 1;
  for (std::size_t f = 0; f < rule.factors.size(); ++f) {
    const ir::Factor& factor = rule.factors[f];
    if (factor.name.size() == 1 && normalized.find(factor.name[0]) != std::string_view::npos) {
      axes.insert(axes.end(), factor_axes[f].begin(), factor_axes[f].end());
      continue;
    }
    int64_t shards = 1;
    for (int axis : factor_axes[f]) shards *= mesh.shape.at(axis);
    rows *= factor.size / shards;
  }
  std::sort(axes.begin(), axes.end());
  return row_exchange_cost(model, mode, rows, axes, mesh);
}

}  // namespace shardsynth::costs
