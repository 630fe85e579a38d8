#include "synth/lowering.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "ir/error.hpp"
#include "ir/op_sharding.hpp"
#include "costs/param_storage.hpp"
#include "costs/row_exchange.hpp"
#include "ir/op_table.hpp"
#include "ir/staged_schedule.hpp"
#include "synth/followers.hpp"
#include "synth/liveness.hpp"
#include "synth/recompute.hpp"

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

// Mesh axes sharding a factor that an operand lacks: its gradient is
// contracted over them and so comes out partial there.
std::vector<int> grad_partial_axes(const std::vector<ir::DimFactors>& operand,
                                   const std::vector<std::vector<int>>& factor_axes) {
  std::vector<bool> present(factor_axes.size(), false);
  for (const auto& dim : operand) {
    for (int f : dim) present[f] = true;
  }
  std::vector<int> axes;
  for (std::size_t f = 0; f < factor_axes.size(); ++f) {
    if (!present[f]) axes.insert(axes.end(), factor_axes[f].begin(), factor_axes[f].end());
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

// One problem edge per parameter tied to another, from the node storing it
// to the node using it: the use reads the stored parameter resharded and
// sends its gradient back (costs::tied_param_cost).
void add_tied_edges(Lowered& out, const costs::CostModel& model) {
  const ir::Graph& graph = out.graph;
  std::map<std::string, std::pair<ir::Vertex, int>> stored;  // full parameter name -> (node, param index)
  for (ir::Vertex v : out.order) {
    const ir::Node& node = graph.node(v);
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      if (node.params[p].tied_to.empty()) stored[node.name + "." + node.params[p].name] = {v, static_cast<int>(p)};
    }
  }
  for (ir::Vertex v : out.order) {
    const ir::Node& node = graph.node(v);
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      const auto it = stored.find(node.params[p].tied_to);
      if (it == stored.end()) continue;
      const auto [u, q] = it->second;
      const int from = out.storage[u][q];
      const int to = out.owner[v];
      const ir::TensorType& type = node.params[p].type;
      ProblemEdge edge{from, to, {}};
      for (const auto& held : out.nodes[from].strategies) {
        // The use's gradient goes to the stored spec, then to the gradient buffer (a slice).
        const costs::ParamStorage& storage = held.storage->storage;
        const ir::TensorType grad{type.shape, costs::reduce_dtype(out.options.precision, type.dtype)};
        const auto to_grad = model.reshard_cost(grad, storage.stored, storage.grad, out.mesh);
        for (std::size_t b = 0; b < out.nodes[to].strategies.size(); ++b) {
          const ir::Spec& use = param_spec(out, v, static_cast<int>(p), b);
          const auto tied = costs::tied_param_cost(model, out.options.mode, type, storage.stored, use, out.mesh,
                                                   out.options.precision);
          // A recomputation reads its copy once more.
          const auto again = out.nodes[to].strategies[b].recompute ? model.reshard_cost(type, storage.stored, use, out.mesh)
                                                                     : std::optional<int64_t>(0);
          edge.costs.push_back(tied && to_grad && again ? *tied + *to_grad + *again : kForbidden);
        }
      }
      out.problem.edges.push_back(std::move(edge));
      out.tied.push_back({u, q, v, static_cast<int>(p)});
    }
  }
}

// A storage choice made for a use spec that no allowed strategy of its op
// reads (a plan family's filter) is forbidden itself, so that bounds such as
// least_peak do not count on it. `edge` runs from the storage node to the op.
void forbid_unread_choices(Problem& problem, const ProblemEdge& edge) {
  const std::vector<int64_t>& op_costs = problem.nodes[edge.to].costs;
  std::vector<int64_t>& choice_costs = problem.nodes[edge.from].costs;
  for (std::size_t a = 0; a < choice_costs.size(); ++a) {
    bool usable = false;
    for (std::size_t b = 0; b < op_costs.size() && !usable; ++b) {
      usable = op_costs[b] < kForbidden && edge.costs[a * op_costs.size() + b] < kForbidden;
    }
    if (!usable) choice_costs[a] = kForbidden;
  }
}

// One problem edge per storage node, to its op (costs::storage_cost): a
// storage choice prices the use spec it was made for, and forbids the others.
void add_storage_edges(Lowered& out, const costs::CostModel& model) {
  for (ir::Vertex v : out.order) {
    const ir::Node& node = out.graph.node(v);
    for (std::size_t p = 0; p < out.storage[v].size(); ++p) {
      const int from = out.storage[v][p];
      if (from < 0) continue;
      const int to = out.owner[v];
      const ir::TensorType& type = node.params[p].type;
      ProblemEdge edge{from, to, {}};
      for (const auto& held : out.nodes[from].strategies) {
        const StorageChoice& choice = *held.storage;
        for (const auto& s : out.nodes[to].strategies) {
          const std::size_t operand = s.operands.size() - node.params.size() + p;
          if (s.operands[operand] != choice.use) {
            edge.costs.push_back(kForbidden);
            continue;
          }
          const costs::OperandUse use{type, s.operands[operand], s.grad_partial[operand]};
          const auto cost = costs::storage_cost(model, choice.storage, use, out.mesh, out.options.precision);
          // A recomputation gathers the parameter once more.
          const auto again = s.recompute ? model.reshard_cost(type, choice.storage.stored, use.spec, out.mesh)
                                         : std::optional<int64_t>(0);
          edge.costs.push_back(cost && again ? *cost + *again : kForbidden);
        }
      }
      forbid_unread_choices(out.problem, edge);
      out.problem.edges.push_back(std::move(edge));
      out.stored.push_back({v, static_cast<int>(p)});
    }
  }
}

// Each problem node is live over the union of what it holds
// (synth/liveness.hpp): the outputs of the graph nodes it decides; a storage
// node, the whole step. Followers (synth/followers.hpp) come later, each
// with its own interval.
void set_liveness(Lowered& out) {
  const StepClock clock{out.options.mode, static_cast<int64_t>(out.order.size())};
  const auto activations = activation_intervals(out.graph, out.order, clock);
  std::vector<Interval> live(out.problem.nodes.size());
  for (ir::Vertex v : out.order) {
    const int n = out.owner[v];
    live[n] = span(live[n], activations[v]);
    for (int held : out.storage[v]) {
      if (held >= 0) live[held] = clock.whole();
    }
  }
  for (std::size_t n = 0; n < live.size(); ++n) {
    out.problem.nodes[n].live_from = live[n].from;
    out.problem.nodes[n].live_to = live[n].to;
  }
}

}  // namespace

Problem restrict_problem(const Lowered& lowered, const StrategyFilter& allow) {
  Problem problem = lowered.problem;
  if (!allow) return problem;
  for (std::size_t n = 0; n < problem.nodes.size(); ++n) {
    const NodeLabel& label = lowered.nodes[n];
    if (label.role == NodeRole::follower) continue;  // lowering filters the nodes that decide, not their followers
    std::vector<int64_t>& costs = problem.nodes[n].costs;
    for (std::size_t s = 0; s < costs.size(); ++s) {
      if (!allow(lowered.graph, label.vertex, label.strategies[s])) costs[s] = kForbidden;
    }
  }
  const std::size_t first_storage_edge = lowered.edges.size() + lowered.tied.size();
  for (std::size_t i = 0; i < lowered.stored.size(); ++i) {
    forbid_unread_choices(problem, problem.edges[first_storage_edge + i]);
  }
  return problem;
}

namespace {

// One walk of the graph in topological order, adding a solver node per
// deciding tensor (inputs, outputs, ops; followers join their producer's
// node), a storage node per stored parameter in training, and the edges
// between them; then the passes that need the whole problem.
class GraphLowering {
 public:
  GraphLowering(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model, const LowerOptions& options)
      : graph_(graph),
        mesh_(mesh),
        model_(model),
        options_(options),
        space_(model.spec_space(mesh)),
        out_{graph,   mesh, graph.topological_order(), {}, {}, {}, {}, {}, std::vector<int>(graph.size(), -1),
             std::vector<std::vector<int>>(graph.size()), options},
        stores_(options.mode == costs::Mode::training),
        offers_recompute_(stores_ && options.recompute && options.memory_budget.has_value()),
        segments_(offers_recompute_ ? ir::recompute_segments(graph, out_.order) : ir::RecomputeSegments{}) {
    out_.problem.usage_limit = options.memory_budget;
  }

  Lowered run() {
    for (ir::Vertex v : out_.order) lower_vertex(v);
    if (stores_) {
      add_tied_edges(out_, model_);
      add_storage_edges(out_, model_);
    }
    set_liveness(out_);
    if (offers_recompute_) add_saved_nodes(out_, segments_);
    if (stores_) {
      add_gathered_followers(out_);
    } else {
      add_param_followers(out_);
    }
    return std::move(out_);
  }

 private:
  void lower_vertex(ir::Vertex v) {
    const ir::Node& node = graph_.node(v);
    if (node.kind == ir::kPlaceholder) return lower_input(v);
    if (node.kind == ir::kOutput) return lower_output(v);
    const ir::ShardingRule rule = ir::rule_for(graph_, v);
    if (follows(v, rule)) return;
    lower_op(v, rule);
  }

  ir::Spec replicated_of(const ir::Node& node) const {
    return ir::replicated(ir::spec_rank(space_, static_cast<int>(node.type.shape.size())));
  }

  void lower_input(ir::Vertex v) {
    const ir::Node& node = graph_.node(v);
    std::vector<StrategyInfo> strategies;
    for (auto& spec : model_.shards_graph_inputs() ? tensor_specs(node.type) : std::vector<ir::Spec>{replicated_of(node)}) {
      strategies.push_back({{}, spec, spec, {}, {}, {}});
    }
    add_node(v, NodeRole::input, std::move(strategies));
  }

  void lower_output(ir::Vertex v) {
    const ir::Node& node = graph_.node(v);
    if (graph_.inputs_of(v).size() != 1) throw ir::InputError("output node '" + node.name + "' must have exactly one input");
    std::vector<StrategyInfo> strategies;
    for (auto& spec : model_.replicated_outputs() ? std::vector<ir::Spec>{replicated_of(node)} : tensor_specs(node.type)) {
      strategies.push_back({{spec}, spec, spec, {{}}, {}, {}});
    }
    add_node(v, NodeRole::output, std::move(strategies));
    add_operand_edges(v);
  }

  // A follower shares its producer's decision, unless partial sums may flow
  // and it does not distribute over them (gelu(a) + gelu(b) != gelu(a + b)):
  // then it reads a resolved tensor like any other op. Returns whether v follows.
  bool follows(ir::Vertex v, const ir::ShardingRule& rule) {
    const ir::Node& node = graph_.node(v);
    const bool partial_safe = ir::op_info(node.kind, node.name).linear || model_.resolves_partial_in_op();
    if (!is_following(rule) || !node.params.empty() || !partial_safe) return false;
    const int owner = out_.owner[graph_.inputs_of(v)[0]];
    out_.owner[v] = owner;
    for (std::size_t s = 0; s < out_.nodes[owner].strategies.size(); ++s) {
      out_.problem.nodes[owner].usages[s] +=
          costs::activation_bytes(node.type, out_.nodes[owner].strategies[s].output, mesh_);
    }
    return true;
  }

  void lower_op(ir::Vertex v, const ir::ShardingRule& rule) {
    const ir::Node& node = graph_.node(v);
    std::vector<int64_t> forward_again;  // per strategy: the forward's cost once more, for a recompute twin
    const bool twins = offers_recompute_ && ir::may_recompute(graph_, segments_, v);
    std::vector<StrategyInfo> strategies = op_strategies(v, rule, twins ? &forward_again : nullptr);
    if (twins) add_recompute_twins(strategies, forward_again);
    if (strategies.empty()) {
      throw ir::InputError("node '" + node.name + "' (" + node.kind + ") has no legal sharding on mesh " +
                           ir::mesh_string(mesh_) + " under the " + model_.name() + " cost model");
    }
    add_node(v, NodeRole::op, std::move(strategies));
    add_operand_edges(v);
    out_.storage[v].assign(node.params.size(), -1);
    for (std::size_t p = 0; p < node.params.size() && stores_; ++p) {
      if (node.params[p].tied_to.empty()) add_storage_node(v, static_cast<int>(p));
    }
  }

  // Every legal sharding of the op's rule with its cost; with
  // `forward_again`, each kept strategy's forward cost once more (-1 where
  // it has none), for its recompute twin.
  std::vector<StrategyInfo> op_strategies(ir::Vertex v, const ir::ShardingRule& rule,
                                          std::vector<int64_t>* forward_again) const {
    const ir::Node& node = graph_.node(v);
    const double flops = ir::forward_flops(graph_, v, rule);
    const std::string& normalized = ir::op_info(node.kind, node.name).normalized;
    std::vector<StrategyInfo> strategies;
    for (auto& sharding : ir::enumerate_op_shardings(rule, mesh_, space_)) {
      StrategyInfo s{std::move(sharding.operands), sharding.result, sharding.result, {}, {}, sharding.factor_axes};
      if (model_.resolves_partial_in_op()) s.output.partial.clear();
      for (const auto& dims : rule.operands) s.grad_partial.push_back(grad_partial_axes(dims, sharding.factor_axes));
      const int64_t shards = shard_count(sharding.factor_axes);
      auto cost = costs::op_cost(model_, options_.mode, flops, shards, node.type, s.result, s.output,
                                 param_uses(node, rule, s), mesh_);
      // A row-wise exchange the op itself makes (a vocabulary-sharded loss: costs/row_exchange.hpp).
      const auto exchange = costs::op_exchange_cost(model_, options_.mode, rule, normalized, s.factor_axes, mesh_);
      if (!cost || !exchange) continue;
      s.cost = *cost;
      s.cost.exchange = *exchange;
      if (forward_again) {
        const auto forward =
            costs::op_cost(model_, costs::Mode::inference, flops, shards, node.type, s.result, s.output, {}, mesh_);
        const auto again =
            costs::op_exchange_cost(model_, costs::Mode::inference, rule, normalized, s.factor_axes, mesh_);
        forward_again->push_back(forward && again ? forward->total() + *again : -1);
      }
      strategies.push_back(std::move(s));
    }
    return strategies;
  }

  int64_t shard_count(const std::vector<std::vector<int>>& factor_axes) const {
    int64_t shards = 1;
    for (const auto& axes : factor_axes) {
      for (int axis : axes) shards *= mesh_.shape[axis];
    }
    return shards;
  }

  // The parameters the op prices itself: all of them in inference, the tied
  // ones in training (a stored parameter's storage edge resolves its gradient).
  std::vector<costs::OperandUse> param_uses(const ir::Node& node, const ir::ShardingRule& rule,
                                            const StrategyInfo& s) const {
    const std::size_t first_param = rule.operands.size() - node.params.size();
    std::vector<costs::OperandUse> params;
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      if (stores_ && node.params[p].tied_to.empty()) continue;
      params.push_back({node.params[p].type, s.operands[first_param + p], s.grad_partial[first_param + p]});
    }
    return params;
  }

  // Each strategy's recompute twin (synth/recompute.hpp; add_saved_nodes
  // forbids it again where a follower is read outside the segment).
  static void add_recompute_twins(std::vector<StrategyInfo>& strategies, const std::vector<int64_t>& forward_again) {
    const std::size_t kept = strategies.size();
    for (std::size_t i = 0; i < kept; ++i) {
      if (forward_again[i] < 0) continue;
      StrategyInfo twin = strategies[i];
      twin.recompute = true;
      twin.cost.recompute = forward_again[i];
      strategies.push_back(std::move(twin));
    }
  }

  void add_node(ir::Vertex v, NodeRole role, std::vector<StrategyInfo> strategies) {
    const ir::Node& node = graph_.node(v);
    ProblemNode pn{node.name, {}, {}, 0, 0};  // liveness: set_liveness
    for (const auto& s : strategies) {
      pn.costs.push_back(options_.allow && !options_.allow(graph_, v, s) ? kForbidden : s.cost.total());
      pn.usages.push_back(costs::activation_bytes(node.type, s.output, mesh_));  // parameters: on followers
    }
    out_.problem.nodes.push_back(std::move(pn));
    out_.nodes.push_back({role, v, std::move(strategies)});
    out_.owner[v] = static_cast<int>(out_.problem.nodes.size() - 1);
  }

  // The storage node of op v's parameter p: every choice for every spec the op may read it in.
  void add_storage_node(ir::Vertex v, int p) {
    const ir::Node& node = graph_.node(v);
    const ir::Param& param = node.params[p];
    const NodeLabel& op = out_.nodes[out_.owner[v]];
    std::set<ir::Spec> uses;
    for (const auto& s : op.strategies) uses.insert(s.operands[s.operands.size() - node.params.size() + p]);
    ProblemNode pn{node.name + "." + param.name, {}, {}, 0, 0};
    std::vector<StrategyInfo> strategies;
    for (const auto& use : uses) {
      for (auto& choice : storage_choices(use, param.type.shape, mesh_)) {
        StrategyInfo s;
        s.operands = {choice.storage.grad, choice.storage.state};
        s.result = s.output = choice.storage.stored;
        s.storage = std::move(choice);
        pn.costs.push_back(options_.allow && !options_.allow(graph_, v, s) ? kForbidden : 0);
        pn.usages.push_back(costs::storage_bytes(param.type, s.storage->storage, mesh_, options_.precision).total());
        strategies.push_back(std::move(s));
      }
    }
    out_.problem.nodes.push_back(std::move(pn));
    out_.nodes.push_back({NodeRole::storage, v, std::move(strategies), p});
    out_.storage[v][p] = static_cast<int>(out_.problem.nodes.size() - 1);
  }

  // Edges from every tensor operand's producer to the node deciding the consumer's operand specs.
  void add_operand_edges(ir::Vertex consumer) {
    const auto inputs = graph_.inputs_of(consumer);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      out_.problem.edges.push_back(operand_edge(inputs[i], consumer, i));
      out_.edges.push_back({inputs[i], consumer, static_cast<int>(i)});
    }
  }

  ProblemEdge operand_edge(ir::Vertex producer_vertex, ir::Vertex consumer, std::size_t i) {
    const int from = out_.owner[producer_vertex];
    const int to = out_.owner[consumer];
    const ir::Node& producer = graph_.node(producer_vertex);
    // A stage graph's received activation (ir::kReceivedTarget) sends its gradient back to its stage.
    const bool needs_grad = (producer.kind != ir::kPlaceholder || producer.target == ir::kReceivedTarget) &&
                            producer.type.dtype != ir::DType::int64;
    // Many strategies share an output spec, and many share how they read
    // operand i: each distinct pair is priced once.
    std::vector<const ir::Spec*> outputs;       // distinct output specs of the producer's strategies
    std::vector<int> output_of;                 // per producer strategy: its index in `outputs`
    for (const auto& source : out_.nodes[from].strategies) {
      output_of.push_back(distinct_index(outputs, source.output, std::equal_to<ir::Spec>()));
    }
    std::vector<const StrategyInfo*> readers;   // a strategy per distinct way the consumer reads operand i
    std::vector<int> reader_of;                 // per consumer strategy: its index in `readers`
    // Strategies read operand i alike with the same spec, gradient's partial axes and recomputation.
    const auto reads_alike = [i](const StrategyInfo& a, const StrategyInfo& b) {
      return a.recompute == b.recompute && a.operands[i] == b.operands[i] && a.grad_partial[i] == b.grad_partial[i];
    };
    for (const auto& target : out_.nodes[to].strategies) reader_of.push_back(distinct_index(readers, target, reads_alike));
    std::vector<int64_t> priced;                // per (output, reader) pair, row-major
    for (const ir::Spec* output : outputs) {
      for (const StrategyInfo* reader : readers) priced.push_back(read_cost(producer.type, *output, *reader, i, needs_grad));
    }
    ProblemEdge edge{from, to, {}};
    for (int a : output_of) {
      for (int b : reader_of) edge.costs.push_back(priced[a * readers.size() + b]);
    }
    return edge;
  }

  // Index of the first of `distinct` that is `same` as `item`; `item` is appended when none is.
  template <typename T, typename Same>
  static int distinct_index(std::vector<const T*>& distinct, const T& item, Same same) {
    for (std::size_t k = 0; k < distinct.size(); ++k) {
      if (same(*distinct[k], item)) return static_cast<int>(k);
    }
    distinct.push_back(&item);
    return static_cast<int>(distinct.size() - 1);
  }

  // Cost of feeding a tensor of `type` produced as `output` to operand i of
  // `reader` (kForbidden when unreachable). Layers repeat their edges, so
  // each price is kept for the rest of the walk.
  int64_t read_cost(const ir::TensorType& type, const ir::Spec& output, const StrategyInfo& reader, std::size_t i,
                    bool needs_grad) {
    ReadKey key{type.shape,           static_cast<int>(type.dtype), output,    reader.operands[i],
                reader.grad_partial[i], needs_grad,                  reader.recompute};
    const auto known = read_costs_.find(key);
    if (known != read_costs_.end()) return known->second;
    const costs::OperandUse use{type, reader.operands[i], reader.grad_partial[i]};
    const auto cost = costs::edge_cost(model_, options_.mode, output, use, needs_grad, mesh_);
    // A recomputed output reads its operands again: the forward resharding once more.
    const auto again = reader.recompute ? costs::edge_cost(model_, costs::Mode::inference, output, use, false, mesh_)
                                        : std::optional<int64_t>(0);
    const int64_t price = cost && again ? *cost + *again : kForbidden;
    read_costs_.emplace(std::move(key), price);
    return price;
  }

  // What read_cost's price depends on, besides the lowering's mode, mesh and cost model.
  struct ReadKey {
    std::vector<int64_t> shape;     // the tensor's global extents
    int dtype;                      // its ir::DType
    ir::Spec output;                // the spec it is produced in
    ir::Spec read;                  // the spec the operand is read in
    std::vector<int> grad_partial;  // mesh axes the operand's gradient comes out partial on
    bool needs_grad;                // whether a gradient flows back to the producer
    bool recompute;                 // whether the reader reads it again to recompute its output
    auto operator<=>(const ReadKey&) const = default;
  };

  // Every spec of a tensor's own dims without partial sums: inputs that may arrive sharded, free outputs.
  std::vector<ir::Spec> tensor_specs(const ir::TensorType& type) const {
    std::vector<ir::Spec> specs;
    const auto identity = ir::make_rule("...->...", {}, {type.shape}, type.shape);
    for (auto& sharding : ir::enumerate_op_shardings(identity, mesh_, space_)) specs.push_back(std::move(sharding.result));
    return specs;
  }

  const ir::Graph& graph_;              // the graph lowered
  const ir::Mesh& mesh_;                // the mesh it is lowered for
  const costs::CostModel& model_;       // prices every strategy and edge
  const LowerOptions& options_;         // mode, budget, filter, recomputation
  const ir::SpecSpace space_;           // the specs the cost model allows on this mesh
  Lowered out_;                         // what the walk builds
  const bool stores_;                   // training: each untied parameter has a storage node of its own
  const bool offers_recompute_;         // under a budget in training, ops may recompute their outputs (synth/recompute.hpp)
  const ir::RecomputeSegments segments_;  // where recomputation may happen (empty when not offered)
  std::map<ReadKey, int64_t> read_costs_;  // read_cost's prices so far (kForbidden: unreachable)
};

}  // namespace

Lowered lower(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model, const LowerOptions& options) {
  return GraphLowering(graph, mesh, model, options).run();
}

}  // namespace shardsynth::synth
