#include "synth/lowering.hpp"

#include "ir/error.hpp"
#include "ir/op_sharding.hpp"
#include "ir/op_table.hpp"

namespace shardsynth::synth {
namespace {

// Whether a rule passes its only operand through unchanged: same factors,
// dim for dim, all pass-through.
bool is_following(const ir::ShardingRule& rule) {
  if (rule.operands.size() != 1 || rule.operands[0] != rule.result) return false;
  for (const auto& f : rule.factors) {
    if (f.kind != ir::FactorKind::pass_through) return false;
  }
  return true;
}

int64_t spec_bytes(const ir::TensorType& type, const ir::Spec& spec, const ir::Mesh& mesh) {
  return ir::num_elements(ir::local_shape(type.shape, spec, mesh)) * ir::dtype_bytes(type.dtype);
}

}  // namespace

std::vector<std::vector<int>> edges_by_consumer(const Lowered& lowered) {
  std::vector<std::vector<int>> into(lowered.graph.size());
  for (std::size_t e = 0; e < lowered.edges.size(); ++e) into[lowered.edges[e].consumer].push_back(static_cast<int>(e));
  return into;
}

const ir::Spec& output_spec(const Lowered& lowered, const Assignment& assignment, ir::Vertex v) {
  const int node = lowered.owner.at(v);
  return lowered.nodes[node].strategies[assignment[node]].output;
}

Lowered lower(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model) {
  const ir::SpecSpace space = model.spec_space(mesh);
  Lowered out{graph, mesh, graph.topological_order(), {}, {}, {}, std::vector<int>(graph.size(), -1)};
  Problem& problem = out.problem;

  auto add_node = [&](ir::Vertex v, NodeRole role, std::vector<StrategyInfo> strategies, std::vector<int64_t> costs) {
    const ir::Node& node = graph.node(v);
    ProblemNode pn{node.name, std::move(costs), {}, 0, 0};
    for (const auto& s : strategies) {
      int64_t bytes = spec_bytes(node.type, s.output, mesh);
      for (std::size_t p = 0; p < node.params.size(); ++p) {
        const auto& spec = s.operands[s.operands.size() - node.params.size() + p];
        bytes += spec_bytes(node.params[p].type, spec, mesh);
      }
      pn.usages.push_back(bytes);
    }
    problem.nodes.push_back(std::move(pn));
    out.nodes.push_back({role, v, std::move(strategies)});
    out.owner[v] = static_cast<int>(problem.nodes.size() - 1);
  };

  // Edges from every tensor operand's producer to the node deciding the consumer's operand specs.
  auto add_operand_edges = [&](ir::Vertex consumer) {
    const int to = out.owner[consumer];
    const auto inputs = graph.inputs_of(consumer);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int from = out.owner[inputs[i]];
      const auto& type = graph.node(inputs[i]).type;
      ProblemEdge edge{from, to, {}};
      for (const auto& source : out.nodes[from].strategies) {
        for (const auto& target : out.nodes[to].strategies) {
          auto cost = model.reshard_cost(type, source.output, target.operands[i], mesh);
          edge.costs.push_back(cost ? *cost : kForbidden);
        }
      }
      problem.edges.push_back(std::move(edge));
      out.edges.push_back({inputs[i], consumer, static_cast<int>(i)});
    }
  };

  for (ir::Vertex v : out.order) {
    const ir::Node& node = graph.node(v);
    const int rank = static_cast<int>(node.type.shape.size());
    const ir::Spec replicated = ir::replicated(ir::spec_rank(space, rank));
    if (node.kind == ir::kPlaceholder) {
      // Inputs arrive replicated, or in any spec the model can express when it allows that.
      std::vector<StrategyInfo> strategies;
      if (model.shards_graph_inputs()) {
        const auto identity = ir::make_rule("...->...", {}, {node.type.shape}, node.type.shape);
        for (auto& sharding : ir::enumerate_op_shardings(identity, mesh, space)) {
          strategies.push_back({{}, sharding.result, sharding.result});
        }
      } else {
        strategies.push_back({{}, replicated, replicated});
      }
      std::vector<int64_t> costs(strategies.size(), 0);
      add_node(v, NodeRole::input, std::move(strategies), std::move(costs));
      continue;
    }
    if (node.kind == ir::kOutput) {
      add_node(v, NodeRole::output, {{std::vector<ir::Spec>(graph.inputs_of(v).size(), replicated), replicated, replicated}},
               {0});
      add_operand_edges(v);
      continue;
    }
    const ir::ShardingRule rule = ir::rule_for(graph, v);
    if (is_following(rule) && node.params.empty()) {
      out.owner[v] = out.owner[graph.inputs_of(v)[0]];
      continue;
    }
    std::vector<StrategyInfo> strategies;
    std::vector<int64_t> costs;
    for (auto& sharding : ir::enumerate_op_shardings(rule, mesh, space)) {
      StrategyInfo s{std::move(sharding.operands), sharding.result, sharding.result};
      int64_t cost = 0;
      if (model.resolves_partial_in_op() && !s.result.partial.empty()) {
        s.output.partial.clear();
        cost = model.reshard_cost(node.type, s.result, s.output, mesh).value_or(kForbidden);
      }
      strategies.push_back(std::move(s));
      costs.push_back(cost);
    }
    if (strategies.empty()) {
      throw ir::InputError("node '" + node.name + "' (" + node.kind + ") has no legal sharding on mesh " +
                           ir::mesh_string(mesh) + " under the " + model.name() + " cost model");
    }
    add_node(v, NodeRole::op, std::move(strategies), std::move(costs));
    add_operand_edges(v);
  }
  return out;
}

}  // namespace shardsynth::synth
