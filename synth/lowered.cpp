#include "synth/lowered.hpp"

namespace shardsynth::synth {

const ir::Spec& param_spec(const Lowered& lowered, ir::Vertex v, int param, std::size_t strategy) {
  const StrategyInfo& info = lowered.nodes[lowered.owner[v]].strategies[strategy];
  return info.operands[info.operands.size() - lowered.graph.node(v).params.size() + param];
}

std::optional<StorageChoice> storage_choice(const Lowered& lowered, const Assignment& assignment, ir::Vertex v, int param) {
  const auto& nodes = lowered.storage.at(v);
  if (param >= static_cast<int>(nodes.size()) || nodes[param] < 0) return std::nullopt;
  return lowered.nodes[nodes[param]].strategies[assignment[nodes[param]]].storage;
}

std::vector<std::vector<int>> edges_by_consumer(const Lowered& lowered) {
  std::vector<std::vector<int>> into(lowered.graph.size());
  for (std::size_t e = 0; e < lowered.edges.size(); ++e) into[lowered.edges[e].consumer].push_back(static_cast<int>(e));
  return into;
}

const ir::Spec& output_spec(const Lowered& lowered, const Assignment& assignment, ir::Vertex v) {
  const int node = lowered.owner.at(v);
  return lowered.nodes[node].strategies[assignment[node]].output;
}

}  // namespace shardsynth::synth
