#include "synth/collective_ledger.hpp"

#include "costs/alpha_beta_cost_model.hpp"
#include "costs/param_storage.hpp"
#include "ir/op_table.hpp"
#include "ir/staged_schedule.hpp"

namespace shardsynth::synth {
namespace {

using costs::Move;
using costs::Phase;

// Appends `moves` expanded into their communicating steps, under `tensor`;
// `phase` overrides each move's own (a recomputation's moves run in the backward).
struct Sink {
  std::vector<PricedCollective>& out;  // where the rows go
  const costs::CostModel& model;       // prices each step
  const ir::Mesh& mesh;                // the plan's mesh
};

void add_steps(Sink& sink, const std::vector<Move>& moves, const std::string& tensor, const Phase* phase = nullptr) {
  const ir::Mesh& mesh = sink.mesh;
  for (const Move& m : moves) {
    const auto steps = costs::plan_resharding(m.from, m.to, mesh);
    if (!steps) continue;  // unreachable: the plan could not have been priced
    ir::Spec current = m.from;
    const std::string move = ir::to_string(m.from, mesh.rank()) + "->" + ir::to_string(m.to, mesh.rank());
    for (const costs::Collective& step : *steps) {
      if (step.kind != costs::CollectiveKind::slice && mesh.shape.at(step.mesh_axis) > 1) {
        const int64_t elements = ir::num_elements(ir::local_shape(m.type.shape, current, mesh));
        sink.out.push_back({step, phase ? *phase : m.phase, costs::ring_bytes_sent(step, m.type, current, mesh), elements,
                            sink.model.collective_cost(step, m.type, current, mesh), tensor, move});
      }
      current = costs::apply(step, current);
    }
  }
}

const StrategyInfo& chosen(const Lowered& l, const Assignment& a, int n) { return l.nodes[n].strategies[a[n]]; }

// Every operand edge, as lowering's operand_edge prices it.
void edges(const Lowered& l, const Assignment& a, Sink& out) {
  const costs::Mode mode = l.options.mode;
  const Phase again = Phase::backward;
  for (const EdgeLabel& e : l.edges) {
    const ir::Node& producer = l.graph.node(e.producer);
    const StrategyInfo& target = chosen(l, a, l.owner[e.consumer]);
    const bool needs_grad = (producer.kind != ir::kPlaceholder || producer.target == ir::kReceivedTarget) &&
                            producer.type.dtype != ir::DType::int64;
    const costs::OperandUse use{producer.type, target.operands[e.operand], target.grad_partial[e.operand]};
    const ir::Spec& from = output_spec(l, a, e.producer);
    add_steps(out, costs::edge_moves(mode, from, use, needs_grad), producer.name);
    if (mode == costs::Mode::training && target.recompute) {
      add_steps(out, costs::edge_moves(costs::Mode::inference, from, use, false), producer.name, &again);
    }
  }
}

// Every deciding op's own moves (resolution, tied gradient syncs), as op_strategies prices them.
void ops(const Lowered& l, const Assignment& a, Sink& out) {
  const costs::Mode mode = l.options.mode;
  const Phase again = Phase::backward;
  for (ir::Vertex v : l.order) {
    const NodeLabel& label = l.nodes[l.owner[v]];
    if (label.role != NodeRole::op || label.vertex != v) continue;
    const StrategyInfo& s = chosen(l, a, l.owner[v]);
    const ir::Node& node = l.graph.node(v);
    std::vector<costs::OperandUse> params;  // lowering's param_uses: in training the tied ones only
    const std::size_t first_param = s.operands.size() - node.params.size();
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      if (mode == costs::Mode::training && node.params[p].tied_to.empty()) continue;
      params.push_back({node.params[p].type, s.operands[first_param + p], s.grad_partial[first_param + p]});
    }
    add_steps(out, costs::op_moves(mode, node.type, s.result, s.output, params), node.name);
    if (mode == costs::Mode::training && s.recompute) {
      add_steps(out, costs::op_moves(costs::Mode::inference, node.type, s.result, s.output, {}), node.name, &again);
    }
  }
}

// Every tied use, as add_tied_edges prices it.
void tied(const Lowered& l, const Assignment& a, Sink& out) {
  for (const TiedEdgeLabel& t : l.tied) {
    const auto held = storage_choice(l, a, t.stored, t.stored_param);
    if (!held) continue;
    const costs::ParamStorage& storage = held->storage;
    const ir::Node& node = l.graph.node(t.use);
    const ir::TensorType& type = node.params[t.use_param].type;
    const ir::Spec& use = param_spec(l, t.use, t.use_param, static_cast<std::size_t>(a[l.owner[t.use]]));
    const std::string name = node.name + "." + node.params[t.use_param].name;
    const ir::TensorType grad{type.shape, costs::reduce_dtype(l.options.precision, type.dtype)};
    add_steps(out, {{grad, storage.stored, storage.grad, Phase::backward}}, name);
    add_steps(out, costs::tied_param_moves(l.options.mode, type, storage.stored, use, l.options.precision), name);
    if (chosen(l, a, l.owner[t.use]).recompute) add_steps(out, {{type, storage.stored, use, Phase::backward}}, name);
  }
}

// Every stored parameter, as add_storage_edges prices it.
void stored(const Lowered& l, const Assignment& a, Sink& out) {
  for (const StorageEdgeLabel& e : l.stored) {
    const ir::Node& node = l.graph.node(e.vertex);
    const auto choice = storage_choice(l, a, e.vertex, e.param);
    if (!choice) continue;
    const StrategyInfo& s = chosen(l, a, l.owner[e.vertex]);
    const std::size_t operand = s.operands.size() - node.params.size() + e.param;
    const ir::TensorType& type = node.params[e.param].type;
    const costs::OperandUse use{type, s.operands[operand], s.grad_partial[operand]};
    const std::string name = node.name + "." + node.params[e.param].name;
    add_steps(out, costs::storage_moves(choice->storage, use, l.options.precision), name);
    if (s.recompute) add_steps(out, {{type, choice->storage.stored, use.spec, Phase::backward}}, name);
  }
}

}  // namespace

std::vector<PricedCollective> plan_collectives(const Lowered& lowered, const Assignment& a, const costs::CostModel& model) {
  std::vector<PricedCollective> out;
  Sink sink{out, model, lowered.mesh};
  edges(lowered, a, sink);
  ops(lowered, a, sink);
  tied(lowered, a, sink);
  stored(lowered, a, sink);
  return out;
}

std::string phase_name(costs::Phase phase) {
  switch (phase) {
    case costs::Phase::forward: return "forward";
    case costs::Phase::backward: return "backward";
    case costs::Phase::optimizer: return "optimizer";
  }
  return "forward";
}

}  // namespace shardsynth::synth
