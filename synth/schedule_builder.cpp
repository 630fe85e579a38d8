#include "synth/schedule_builder.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/error.hpp"
#include "synth/followers.hpp"

namespace shardsynth::synth {

ir::Schedule build_schedule(const Lowered& lowered, const Assignment& a, const std::string& cost_model, int64_t cost,
                            bool proven_optimal) {
  const int mesh_rank = lowered.mesh.rank();
  const auto& graph = lowered.graph;
  ir::Schedule schedule{lowered.mesh.shape, cost_model, cost, proven_optimal, {}, {}, costs::mode_name(lowered.options.mode)};
  auto text = [&](const ir::Spec& s) { return ir::to_string(s, mesh_rank); };
  auto sync = [&](const std::string& node, const char* mode, const ir::Spec& from, const ir::Spec& to, int arg) {
    ir::Directive d;
    d.kind = ir::DirectiveKind::sync;
    d.node = node;
    d.mode = mode;
    d.sync_op = text(from) + "->" + text(to);
    d.arg = arg;
    schedule.directives.push_back(std::move(d));
  };
  const auto edges_into = edges_by_consumer(lowered);
  // A recomputed node's ops, its followers too, each get sch["op"].checkpoint().
  auto checkpoint = [&](const std::string& node) {
    ir::Directive d;
    d.kind = ir::DirectiveKind::checkpoint;
    d.node = node;
    schedule.directives.push_back(std::move(d));
  };

  for (ir::Vertex v : lowered.order) {
    const ir::Node& node = graph.node(v);
    const int n = lowered.owner[v];
    const NodeLabel& label = lowered.nodes[n];
    const StrategyInfo& s = label.strategies[a[n]];
    schedule.specs.push_back({node.name, text(s.output)});
    if (label.vertex != v) {  // a following op: nothing of its own to decide
      if (s.recompute) checkpoint(node.name);
      continue;
    }
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
      const std::string tensor = node.name + "." + node.params[p].name;
      schedule.specs.push_back({tensor, text(spec)});
      // Storage apart from the use (training): only what differs from the step before.
      if (const auto held = storage_choice(lowered, a, v, static_cast<int>(p))) {
        const costs::ParamStorage& storage = held->storage;
        if (storage.stored != spec) schedule.specs.push_back({tensor + ir::kStoredSuffix, text(storage.stored)});
        if (storage.grad != storage.stored) schedule.specs.push_back({tensor + ir::kGradSuffix, text(storage.grad)});
        if (storage.state != storage.grad) schedule.specs.push_back({tensor + ir::kStateSuffix, text(storage.state)});
      }
      for (int d = 0; d < spec.rank(); ++d) {
        if (!spec.dims[d].empty()) {
          ir::Directive shard{ir::DirectiveKind::shard, node.name, node.params[p].name, offset + d, spec.blocks_of(d), {}};
          if (mesh_rank > 1) shard.axes = spec.dims[d];
          schedule.directives.push_back(std::move(shard));
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
    if (s.recompute) checkpoint(node.name);
  }
  // Directives on a node must run fwd_pre before fwd_post; the output's
  // fwd_post syncs were appended after the producer's own, which keeps the
  // partial-sum resolution first.
  return schedule;
}

Assignment assignment_from_schedule(const Lowered& lowered, const ir::Schedule& schedule) {
  const int mesh_rank = lowered.mesh.rank();
  const auto& graph = lowered.graph;
  std::map<std::string, std::string> specs;
  for (const auto& t : schedule.specs) specs[t.tensor] = t.spec;
  std::map<std::pair<std::string, int>, std::string> resharded;  // (node, arg) -> spec read after fwd_pre
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> post;  // node -> its fwd_post (from, to), in order
  std::set<std::string> recomputed;  // nodes with a checkpoint directive
  for (const auto& d : schedule.directives) {
    if (d.kind == ir::DirectiveKind::checkpoint) recomputed.insert(d.node);
    if (d.kind != ir::DirectiveKind::sync) continue;
    const auto arrow = d.sync_op.find("->");
    if (arrow == std::string::npos) throw ir::InputError("schedule: sync on '" + d.node + "' is not FROM->TO: '" + d.sync_op + "'");
    if (d.mode == "fwd_pre") {
      resharded[{d.node, d.arg < 0 ? 0 : d.arg}] = d.sync_op.substr(arrow + 2);
    } else {
      post[d.node].emplace_back(d.sync_op.substr(0, arrow), d.sync_op.substr(arrow + 2));
    }
  }
  auto spec_of = [&](const std::string& tensor) -> const std::string& {
    auto it = specs.find(tensor);
    if (it == specs.end()) throw ir::InputError("schedule: no spec for tensor '" + tensor + "'");
    return it->second;
  };
  // A storage entry the schedule leaves out is the one before it (use, stored, grad).
  auto spec_or = [&](const std::string& tensor, const std::string& fallback) {
    auto it = specs.find(tensor);
    return it == specs.end() ? fallback : it->second;
  };
  Assignment a(lowered.nodes.size(), -1);
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    const NodeLabel& label = lowered.nodes[n];
    const ir::Node& node = graph.node(label.vertex);
    if (label.role == NodeRole::follower) continue;  // follows its leader: below
    if (label.role == NodeRole::storage) {
      const std::string tensor = node.name + "." + node.params[label.param].name;
      const std::string use = spec_of(tensor);
      const std::string stored = spec_or(tensor + ir::kStoredSuffix, use);
      const std::string grad = spec_or(tensor + ir::kGradSuffix, stored);
      const std::string state = spec_or(tensor + ir::kStateSuffix, grad);
      for (std::size_t s = 0; s < label.strategies.size() && a[n] < 0; ++s) {
        const StorageChoice& c = *label.strategies[s].storage;
        const bool match = ir::to_string(c.use, mesh_rank) == use && ir::to_string(c.storage.stored, mesh_rank) == stored &&
                           ir::to_string(c.storage.grad, mesh_rank) == grad &&
                           ir::to_string(c.storage.state, mesh_rank) == state;
        if (match && lowered.problem.nodes[n].costs[s] < kForbidden) a[n] = static_cast<int>(s);
      }
      if (a[n] < 0) {
        throw ir::InputError("schedule: parameter '" + tensor + "' has no legal storage " + stored + " (gradient " + grad +
                             ", state " + state + ") for use " + use);
      }
      continue;
    }
    const auto inputs = graph.inputs_of(label.vertex);
    std::vector<std::string> want_operands;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto it = resharded.find({node.name, static_cast<int>(i)});
      if (it != resharded.end()) {
        want_operands.push_back(it->second);
        continue;
      }
      // A graph output reads its producer's spec, after the producer's fwd_post
      // syncs that start from it (build_schedule's resharding of an output
      // that is its producer's only user), as the runtime does.
      std::string spec = spec_of(graph.node(inputs[i]).name);
      if (label.role == NodeRole::output) {
        for (const auto& [from, to] : post[graph.node(inputs[i]).name]) {
          if (from == spec) spec = to;
        }
      }
      want_operands.push_back(spec);
    }
    for (const auto& p : node.params) want_operands.push_back(spec_of(node.name + "." + p.name));
    const std::string& want_output = spec_of(node.name);
    const bool want_recompute = recomputed.count(node.name) > 0;
    for (std::size_t s = 0; s < label.strategies.size() && a[n] < 0; ++s) {
      const StrategyInfo& info = label.strategies[s];
      if (ir::to_string(info.output, mesh_rank) != want_output || info.recompute != want_recompute) continue;
      bool match = label.role == NodeRole::input || info.operands.size() == want_operands.size();
      for (std::size_t i = 0; match && label.role != NodeRole::input && i < want_operands.size(); ++i) {
        match = ir::to_string(info.operands[i], mesh_rank) == want_operands[i];
      }
      if (match && lowered.problem.nodes[n].costs[s] < kForbidden) a[n] = static_cast<int>(s);
    }
    if (a[n] < 0) {
      std::string reads;
      for (const auto& o : want_operands) reads += (reads.empty() ? "" : ", ") + o;
      throw ir::InputError("schedule: node '" + node.name + "' has no legal strategy with output " + want_output +
                           (reads.empty() ? "" : " reading " + reads) + (want_recompute ? ", recomputed" : ""));
    }
  }
  follow_leaders(lowered, a);  // each follower takes the one strategy its leader's choice allows
  return a;
}

}  // namespace shardsynth::synth
