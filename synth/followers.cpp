#include "synth/followers.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "costs/op_cost.hpp"
#include "ir/schedule.hpp"

namespace shardsynth::synth {

int add_follower(Lowered& out, int leader, FollowerKind kind, int param, const std::string& label, const Interval& live,
                 const std::vector<int64_t>& usage_of) {
  const NodeLabel& lead = out.nodes[leader];  // read before out.nodes grows below
  std::map<int64_t, int> index;               // usage -> follower strategy
  std::vector<int> pick(usage_of.size());
  ProblemNode pn{label, {}, {}, live.from, live.to};
  NodeLabel info{NodeRole::follower, lead.vertex, {}, param, leader, kind};
  for (std::size_t s = 0; s < usage_of.size(); ++s) {
    auto [it, added] = index.emplace(usage_of[s], static_cast<int>(pn.costs.size()));
    if (added) {
      pn.costs.push_back(0);
      pn.usages.push_back(usage_of[s]);
      info.strategies.push_back(lead.strategies[s]);
    }
    pick[s] = it->second;
  }
  const int follower = static_cast<int>(out.problem.nodes.size());
  ProblemEdge edge{leader, follower, std::vector<int64_t>(usage_of.size() * pn.costs.size(), kForbidden)};
  for (std::size_t s = 0; s < usage_of.size(); ++s) edge.costs[s * pn.costs.size() + pick[s]] = 0;
  out.problem.nodes.push_back(std::move(pn));
  out.nodes.push_back(std::move(info));
  out.problem.edges.push_back(std::move(edge));
  return follower;
}

std::vector<std::vector<int>> followers_of(const Lowered& lowered) {
  std::vector<std::vector<int>> out(lowered.nodes.size());
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    if (lowered.nodes[n].role == NodeRole::follower) out.at(lowered.nodes[n].of).push_back(static_cast<int>(n));
  }
  return out;
}

void follow_leaders(const Lowered& lowered, Assignment& assignment) {
  for (const ProblemEdge& edge : lowered.problem.edges) {
    const NodeLabel& to = lowered.nodes[edge.to];
    if (to.role != NodeRole::follower || to.of != edge.from) continue;
    const int size = lowered.problem.nodes[edge.to].size();
    assignment[edge.to] = -1;
    for (int t = 0; t < size && assignment[edge.to] < 0; ++t) {
      if (edge.costs[static_cast<std::size_t>(assignment[edge.from]) * size + t] < kForbidden) assignment[edge.to] = t;
    }
  }
}

void add_param_followers(Lowered& out) {
  const StepClock clock{out.options.mode, static_cast<int64_t>(out.order.size())};
  for (ir::Vertex v : out.order) {
    const int op = out.owner[v];
    if (op < 0 || out.nodes[op].vertex != v || out.nodes[op].role != NodeRole::op) continue;
    const auto& params = out.graph.node(v).params;
    const bool holds = std::any_of(params.begin(), params.end(), [](const ir::Param& p) { return p.tied_to.empty(); });
    if (!holds) continue;  // a tied parameter is held by the one it is tied to
    std::vector<int64_t> bytes(out.nodes[op].strategies.size(), 0);
    for (std::size_t s = 0; s < bytes.size(); ++s) {
      for (std::size_t p = 0; p < params.size(); ++p) {
        if (!params[p].tied_to.empty()) continue;
        bytes[s] += costs::param_bytes(out.options.mode, params[p].type,
                                       param_spec(out, v, static_cast<int>(p), s), out.mesh, out.options.precision);
      }
    }
    add_follower(out, op, FollowerKind::params, -1, out.problem.nodes[op].label + ":params", clock.whole(), bytes);
  }
}

void add_gathered_followers(Lowered& out) {
  const StepClock clock{out.options.mode, static_cast<int64_t>(out.order.size())};
  for (std::size_t i = 0; i < out.order.size(); ++i) {
    const ir::Vertex v = out.order[i];
    const int op = out.owner[v];
    if (op < 0 || out.nodes[op].vertex != v || out.nodes[op].role != NodeRole::op) continue;
    const ir::Node& node = out.graph.node(v);
    const auto at = static_cast<int64_t>(i);
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      const ir::TensorType& type = node.params[p].type;
      const bool tied = !node.params[p].tied_to.empty();
      const int leader = tied ? op : out.storage[v].empty() ? -1 : out.storage[v][p];
      if (leader < 0) continue;
      std::vector<int64_t> bytes;
      for (std::size_t s = 0; s < out.nodes[leader].strategies.size(); ++s) {
        // The copy is the use spec's shard (param_bytes in inference: the shard alone).
        if (tied) {
          bytes.push_back(costs::param_bytes(costs::Mode::inference, type, param_spec(out, v, static_cast<int>(p), s),
                                             out.mesh));
          continue;
        }
        const StorageChoice& choice = *out.nodes[leader].strategies[s].storage;
        bytes.push_back(choice.storage.stored == choice.use
                            ? 0
                            : costs::param_bytes(costs::Mode::inference, type, choice.use, out.mesh));
      }
      if (std::all_of(bytes.begin(), bytes.end(), [](int64_t b) { return b == 0; })) continue;
      const std::string name = node.name + "." + node.params[p].name;
      add_follower(out, leader, FollowerKind::gathered, static_cast<int>(p), name + ir::kGatheredSuffix,
                   {clock.forward(at), clock.forward(at) + 1}, bytes);
      add_follower(out, leader, FollowerKind::gathered, static_cast<int>(p), name + ":regathered",
                   {clock.backward(at), clock.backward(at) + 1}, bytes);
    }
  }
}

}  // namespace shardsynth::synth
