#include "synth/report/iteration_table.hpp"

#include "ir/op_table.hpp"
#include "ir/text_table.hpp"

namespace shardsynth::synth {

std::string iteration_header(int index) {
  return "=================== Iter " + std::to_string(index) + " ===================";
}

std::string model_text(const std::vector<std::string>& labels, const Assignment& assignment) {
  std::string text = "[";
  for (std::size_t i = 0; i < assignment.size(); ++i) {
    if (i > 0) text += ", ";
    text += labels.at(i) + " = " + std::to_string(assignment[i]);
  }
  return text + "]";
}

std::vector<int> decision_nodes(const Lowered& lowered) {
  std::vector<int> nodes;
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    if (lowered.nodes[n].role != NodeRole::follower) nodes.push_back(static_cast<int>(n));
  }
  return nodes;
}

std::string model_text(const Lowered& lowered, const Assignment& assignment) {
  std::vector<std::string> labels;
  Assignment decided;
  for (int n : decision_nodes(lowered)) {
    labels.push_back(lowered.problem.nodes[n].label);
    decided.push_back(assignment.at(n));
  }
  return model_text(labels, decided);
}

std::string in_spec_text(const Lowered& lowered, int node, int strategy) {
  const NodeLabel& label = lowered.nodes.at(node);
  const ir::Node& graph_node = lowered.graph.node(label.vertex);
  const StrategyInfo& s = label.strategies.at(strategy);
  const std::size_t tensor_inputs = s.operands.size() - graph_node.params.size();
  std::string text;
  for (std::size_t i = 0; i < s.operands.size(); ++i) {
    ir::Spec spec = s.operands[i];
    if (i >= tensor_inputs) {
      const auto& info = ir::param_info(graph_node, graph_node.params[i - tensor_inputs].name);
      if (!info.shown_in_spec) continue;
      if (info.display_perm.size() == spec.dims.size()) spec = ir::permute(spec, info.display_perm);
    }
    text += (text.empty() ? "" : "x") + ir::to_string(spec, lowered.mesh.rank());
  }
  return text;
}

std::vector<IterationRow> iteration_rows(const Lowered& lowered, const Assignment& a) {
  const int mesh_rank = lowered.mesh.rank();
  const auto& graph = lowered.graph;
  const auto& problem = lowered.problem;
  const auto edges_into = edges_by_consumer(lowered);

  std::vector<IterationRow> rows;
  auto operand_row = [&](int e, const std::string& name) {
    const EdgeLabel& label = lowered.edges[e];
    const int consumer = lowered.owner[label.consumer];
    const auto& use = lowered.nodes[consumer].strategies[a[consumer]].operands[label.operand];
    rows.push_back({name, ir::to_string(output_spec(lowered, a, label.producer), mesh_rank), ir::to_string(use, mesh_rank),
                    edge_cost(problem, problem.edges[e], a)});
  };
  for (ir::Vertex v : lowered.order) {
    const int n = lowered.owner[v];
    const NodeLabel& label = lowered.nodes[n];
    if (label.vertex != v || label.role == NodeRole::input) continue;
    const ir::Node& node = graph.node(v);
    if (label.role == NodeRole::output) {
      const auto& edges = edges_into[v];
      for (int e : edges) {
        operand_row(e, edges.size() == 1 ? node.name : "|-" + graph.node(lowered.edges[e].producer).name);
      }
      continue;
    }
    const StrategyInfo& s = label.strategies[a[n]];
    const std::string in_spec = in_spec_text(lowered, n, a[n]);
    rows.push_back({node.name, in_spec, ir::to_string(s.output, mesh_rank), problem.nodes[n].costs[a[n]]});
    for (int e : edges_into[v]) operand_row(e, "|-" + graph.node(lowered.edges[e].producer).name);
  }
  // Tied parameters (training): the stored spec, the use's spec, and the
  // per-step resharding of the parameter and its gradient between them.
  for (std::size_t t = 0; t < lowered.tied.size(); ++t) {
    const TiedEdgeLabel& tie = lowered.tied[t];
    const ir::Node& use = graph.node(tie.use);
    const int user = lowered.owner[tie.use];
    const auto held = storage_choice(lowered, a, tie.stored, tie.stored_param);
    const ir::Spec& stored = held ? held->storage.stored : param_spec(lowered, tie.stored, tie.stored_param, a[lowered.owner[tie.stored]]);
    rows.push_back({use.name + "." + use.params[tie.use_param].name + " (tied)", ir::to_string(stored, mesh_rank),
                    ir::to_string(param_spec(lowered, tie.use, tie.use_param, a[user]), mesh_rank),
                    edge_cost(problem, problem.edges[lowered.edges.size() + t], a)});
  }
  // Stored parameters (training): stored/gradient/state specs, the use's
  // spec, and the per-step gathers and gradient reduction between them.
  const std::size_t first_stored = lowered.edges.size() + lowered.tied.size();
  for (std::size_t k = 0; k < lowered.stored.size(); ++k) {
    const StorageEdgeLabel& label = lowered.stored[k];
    const auto choice = storage_choice(lowered, a, label.vertex, label.param);
    const costs::ParamStorage& held = choice->storage;
    const ir::Node& node = graph.node(label.vertex);
    rows.push_back({node.name + "." + node.params[label.param].name + " (stored)",
                    ir::to_string(held.stored, mesh_rank) + "/" + ir::to_string(held.grad, mesh_rank) + "/" +
                        ir::to_string(held.state, mesh_rank),
                    ir::to_string(param_spec(lowered, label.vertex, label.param, a[lowered.owner[label.vertex]]), mesh_rank),
                    edge_cost(problem, problem.edges[first_stored + k], a)});
  }
  return rows;
}

std::string format_iteration_rows(const std::vector<IterationRow>& rows, int64_t total) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : rows) cells.push_back({row.name, row.in_spec, row.out_spec, std::to_string(row.cost)});
  cells.push_back({"Total", "", "", std::to_string(total)});
  return ir::format_table({"Name", "InSpec", "OutSpec", "Cost"}, cells);
}

std::string format_iteration_table(const Lowered& lowered, const Assignment& a) {
  return format_iteration_rows(iteration_rows(lowered, a), evaluate(lowered.problem, a));
}

}  // namespace shardsynth::synth
