#include "synth/schedule_builder.hpp"



namespace shardsynth::synth {

ir::Schedule build_schedule(const Lowered& lowered, const Assignment& a, const std::string& cost_model, int64_t cost,
                            bool proven_optimal) {
  const int mesh_rank = lowered.mesh.rank();
  const auto& graph = lowered.graph;
  ir::Schedule schedule{lowered.mesh.shape, cost_model, cost, proven_optimal, {}, {}};
  auto text = [&](const ir::Spec& s) { return ir::to_string(s, mesh_rank); };
  auto sync = [&](const std::string& node, const char* mode, const ir::Spec& from, const ir::Spec& to, int arg) {
    schedule.directives.push_back({ir::DirectiveKind::sync, node, "", -1, mode, text(from) + "->" + text(to), arg});
  };
  const auto edges_into = edges_by_consumer(lowered);

  for (ir::Vertex v : lowered.order) {
    const ir::Node& node = graph.node(v);
    const int n = lowered.owner[v];
    const NodeLabel& label = lowered.nodes[n];
    const StrategyInfo& s = label.strategies[a[n]];
    schedule.specs.push_back({node.name, text(s.output)});
    if (label.vertex != v) continue;  // a following op: nothing of its own to decide
    if (label.role == NodeRole::output) {
      for (int e : edges_into[v]) {
        const EdgeLabel& edge = lowered.edges[e];
        const ir::Spec& from = output_spec(lowered, a, edge.producer);
        const ir::Spec& to = s.operands[edge.operand];
        if (from == to) continue;
        if (graph.users_of(edge.producer).size() == 1) {
          sync(graph.node(edge.producer).name, "fwd_post", from, to, -1);
        } else {
          sync(node.name, "fwd_pre", from, to, edges_into[v].size() > 1 ? edge.operand : -1);
        }
      }
      continue;
    }
    if (label.role != NodeRole::op) continue;
    const std::size_t first_param = s.operands.size() - node.params.size();
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      const ir::Spec& spec = s.operands[first_param + p];
      const int offset = static_cast<int>(node.params[p].type.shape.size()) - spec.rank();
      schedule.specs.push_back({node.name + "." + node.params[p].name, text(spec)});
      for (int d = 0; d < spec.rank(); ++d) {
        if (!spec.dims[d].empty()) {
          schedule.directives.push_back({ir::DirectiveKind::shard, node.name, node.params[p].name, offset + d, "", "", -1});
        }
      }
    }
    const auto& inputs = edges_into[v];
    for (int e : inputs) {
      const EdgeLabel& edge = lowered.edges[e];
      const ir::Spec& from = output_spec(lowered, a, edge.producer);
      const ir::Spec& to = s.operands[edge.operand];
      if (from != to) sync(node.name, "fwd_pre", from, to, inputs.size() > 1 ? edge.operand : -1);
    }
    if (s.result != s.output) sync(node.name, "fwd_post", s.result, s.output, -1);
  }
  // Directives on a node must run fwd_pre before fwd_post; the output's
  // fwd_post syncs were appended after the producer's own, which keeps the
  // partial-sum resolution first.
  return schedule;
}

}  // namespace shardsynth::synth
