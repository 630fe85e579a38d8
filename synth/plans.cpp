#include "synth/plans.hpp"

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "ir/error.hpp"
#include "ir/op_table.hpp"

namespace shardsynth::synth {
namespace {

bool params_replicated(const ir::Node& node, const StrategyInfo& s) {
  const std::size_t first = s.operands.size() - node.params.size();
  for (std::size_t i = first; i < s.operands.size(); ++i) {
    if (!s.operands[i].is_replicated()) return false;
  }
  return true;
}

bool is_graph_input(const ir::Node& node) { return node.kind == ir::kPlaceholder; }

// Whether factor f appears in any dim of `tensor` (an operand or result of a rule).
bool has(const std::vector<ir::DimFactors>& tensor, int f) {
  for (const auto& dim : tensor) {
    for (int g : dim) {
      if (g == f) return true;
    }
  }
  return false;
}

// For a weight op: its contracted factor (shared by tensor input 0 and a
// param) and its output-feature factor (in the result and that param, not in
// the tensor input). -1 when the op is not a weight op.
struct WeightFactors {
  int contracted = -1;  // factor id of the contraction
  int features = -1;    // factor id of the output features
};

WeightFactors weight_factors(const ir::Graph& graph, ir::Vertex v) {
  const ir::Node& node = graph.node(v);
  WeightFactors w;
  if (node.params.empty() || ir::is_boundary(node.kind) || !node.params[0].tied_to.empty()) return w;
  const ir::ShardingRule rule = ir::rule_for(graph, v);
  const std::size_t weight = rule.operands.size() - node.params.size();
  for (int f = 0; f < static_cast<int>(rule.factors.size()); ++f) {
    const bool in_input = has(rule.operands[0], f), in_weight = has(rule.operands[weight], f);
    const bool in_result = has(rule.result, f);
    if (rule.factors[f].kind == ir::FactorKind::reduction && in_input && in_weight) w.contracted = f;
    if (!in_input && in_weight && in_result && rule.factors[f].size > 1) w.features = f;
  }
  if (w.contracted < 0 || w.features < 0) return {};
  return w;
}

StrategyFilter data_parallel(const ir::Mesh& mesh) {
  std::vector<int> all_axes;
  for (int a = 0; a < mesh.rank(); ++a) all_axes.push_back(a);
  const int64_t devices = mesh.num_devices();
  return [all_axes, devices](const ir::Graph& graph, ir::Vertex v, const StrategyInfo& s) {
    const ir::Node& node = graph.node(v);
    if (is_graph_input(node)) {
      const auto& shape = node.type.shape;
      const bool batchable = !shape.empty() && shape[0] % devices == 0 && s.output.rank() == static_cast<int>(shape.size());
      ir::Spec want = ir::replicated(s.output.rank());
      if (batchable) want.dims[0] = all_axes;
      return s.output == want;
    }
    return params_replicated(node, s);
  };
}

// For a lookup op (an embedding): the factor of its table's rows, a
// reduction factor the table has and neither the tensor input nor the
// result has; -1 when the op is none, or when its rows are not the model's
// output vocabulary (the output's last extent: a word embedding, not a
// position table).
int vocab_factor(const ir::Graph& graph, ir::Vertex v, int64_t vocab) {
  const ir::Node& node = graph.node(v);
  if (node.params.empty() || ir::is_boundary(node.kind) || graph.inputs_of(v).empty()) return -1;
  const ir::ShardingRule rule = ir::rule_for(graph, v);
  const std::size_t table = rule.operands.size() - node.params.size();
  for (int f = 0; f < static_cast<int>(rule.factors.size()); ++f) {
    if (rule.factors[f].kind == ir::FactorKind::reduction && has(rule.operands[table], f) &&
        !has(rule.operands[0], f) && !has(rule.result, f) && rule.factors[f].size == vocab) {
      return f;
    }
  }
  return -1;
}

StrategyFilter megatron(const ir::Graph& graph, const ir::Mesh& mesh) {
  const int tp = mesh.rank() - 1;
  // The vocabulary: the model output's last extent. A word embedding is
  // vocab-parallel when the tensor-parallel degree divides it (Megatron pads
  // the vocabulary; a degree that does not divide leaves the table free).
  int64_t vocab = 0;
  for (ir::Vertex v : graph.topological_order()) {
    const auto& shape = graph.node(v).type.shape;
    if (graph.node(v).kind == ir::kOutput && !shape.empty()) vocab = shape.back();
  }
  // word embedding -> (its vocabulary factor, the table's other factors)
  auto lookups = std::make_shared<std::map<ir::Vertex, std::pair<int, std::vector<int>>>>();
  if (vocab > 0 && vocab % mesh.shape[tp] == 0) {
    for (ir::Vertex v : graph.topological_order()) {
      const int f = vocab_factor(graph, v, vocab);
      if (f < 0) continue;
      const ir::ShardingRule rule = ir::rule_for(graph, v);
      std::vector<int> others;
      for (const auto& dim : rule.operands[rule.operands.size() - graph.node(v).params.size()]) {
        for (int g : dim) {
          if (g != f) others.push_back(g);
        }
      }
      (*lookups)[v] = {f, others};
    }
  }
  // Column (true) or row (false) for each weight op, by data flow: a weight
  // op is row-parallel when the nearest weight ops upstream of it (through
  // any non-weight ops) are all column-parallel, and column-parallel
  // otherwise (the first ones, and those after a row-parallel op).
  auto roles = std::make_shared<std::map<ir::Vertex, std::pair<WeightFactors, bool>>>();
  struct Upstream {
    bool column = false;  // a nearest upstream weight op is column-parallel
    bool row = false;     // a nearest upstream weight op is row-parallel
  };
  std::map<ir::Vertex, Upstream> seen;  // per node: what its output carries downstream
  for (ir::Vertex v : graph.topological_order()) {
    Upstream up;
    for (ir::Vertex input : graph.inputs_of(v)) {
      const Upstream& from = seen[input];
      up.column |= from.column;
      up.row |= from.row;
    }
    const WeightFactors w = weight_factors(graph, v);
    if (w.contracted < 0) {
      seen[v] = up;
      continue;
    }
    const bool column = !up.column || up.row;
    (*roles)[v] = {w, column};
    seen[v] = Upstream{column, !column};
  }
  return [roles, lookups, tp](const ir::Graph& g, ir::Vertex v, const StrategyInfo& s) {
    const ir::Node& node = g.node(v);
    if (auto lookup = lookups->find(v); lookup != lookups->end()) {
      // Rows on the tensor-parallel axis, the table's other dims whole (the
      // batch may still be split over the other axes).
      const auto& [rows, others] = lookup->second;
      if (s.factor_axes[rows] != std::vector<int>{tp}) return false;
      for (int f : others) {
        if (!s.factor_axes[f].empty()) return false;
      }
      return true;
    }
    auto it = roles->find(v);
    if (it == roles->end()) return true;
    const auto& [w, is_column] = it->second;
    const std::vector<int> on_tp{tp};
    const auto& sharded = is_column ? s.factor_axes[w.features] : s.factor_axes[w.contracted];
    const auto& other = is_column ? s.factor_axes[w.contracted] : s.factor_axes[w.features];
    if (sharded != on_tp || !other.empty()) return false;
    // Parameters use the tensor-parallel axis only.
    const std::size_t first = s.operands.size() - node.params.size();
    for (std::size_t i = first; i < s.operands.size(); ++i) {
      for (const auto& axes : s.operands[i].dims) {
        for (int a : axes) {
          if (a != tp) return false;
        }
      }
    }
    return true;
  };
}

// `ops` for the ops, and ZeRO stage `stage` for every parameter's storage.
StrategyFilter with_storage(StrategyFilter ops, int stage) {
  return [ops = std::move(ops), stage](const ir::Graph& graph, ir::Vertex v, const StrategyInfo& s) {
    return s.storage ? s.storage->realizes(stage) : ops(graph, v, s);
  };
}

}  // namespace

std::vector<std::string> plan_names() {
  return {"data-parallel", "zero1", "fsdp", "megatron", "megatron-fsdp", std::string(kRandomPlan)};
}

StrategyFilter plan_filter(std::string_view name, const ir::Graph& graph, const ir::Mesh& mesh) {
  if (name == "data-parallel") return with_storage(data_parallel(mesh), 0);
  if (name == "zero1") return with_storage(data_parallel(mesh), 1);
  if (name == "zero2") return with_storage(data_parallel(mesh), 2);
  if (name == "fsdp") return with_storage(data_parallel(mesh), 3);
  if (name == "megatron") return with_storage(megatron(graph, mesh), 0);
  if (name == "megatron-fsdp") return with_storage(megatron(graph, mesh), 3);
  if (name == kRandomPlan) throw ir::InputError("--plan random draws a plan (synth::random_plan); it is no family to search");
  throw ir::InputError("unknown plan '" + std::string(name) +
                       "' (known: data-parallel, zero1, zero2, fsdp, megatron, megatron-fsdp, random)");
}

}  // namespace shardsynth::synth
