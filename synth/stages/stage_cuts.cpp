#include "synth/stages/stage_cuts.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "ir/op_table.hpp"

namespace shardsynth::synth {

namespace {

bool is_placeholder(const ir::Node& node) { return node.kind == ir::kPlaceholder; }
bool is_output(const ir::Node& node) { return node.kind == ir::kOutput; }

// Position of every vertex in `order`.
std::vector<int> positions_of(const ir::Graph& graph, const std::vector<ir::Vertex>& order) {
  std::vector<int> pos(graph.size(), -1);
  for (std::size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<int>(i);
  return pos;
}

// fx spells a module path with "_" for ".".
std::string fx_name(const std::string& name) {
  std::string out = name;
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

// Parameter counts of every module, keyed by fx name: torch's
// `sum(p.numel() for p in module.parameters())`, which counts a tensor
// shared by two parameters of one module once.
std::map<std::string, int64_t> module_param_counts(const ir::Graph& graph, const std::vector<ir::Vertex>& order) {
  std::map<std::string, std::map<std::string, int64_t>> held;  // module -> distinct tensor -> elements
  for (ir::Vertex v : order) {
    const ir::Node& node = graph.node(v);
    for (const auto& p : node.params) {
      const std::string tensor = p.tied_to.empty() ? node.name + "." + p.name : p.tied_to;
      const int64_t n = ir::num_elements(p.type.shape);
      held[""][tensor] = n;
      for (std::size_t dot = node.name.find('.');; dot = node.name.find('.', dot + 1)) {
        held[fx_name(node.name.substr(0, dot))][tensor] = n;  // every parent module, then the node's own
        if (dot == std::string::npos) break;
      }
    }
  }
  std::map<std::string, int64_t> counts;
  counts[""] = 0;
  for (const auto& [module, tensors] : held) {
    int64_t total = 0;
    for (const auto& [tensor, n] : tensors) total += n;
    counts[module] = total;
  }
  return counts;
}

}  // namespace

std::vector<ir::Vertex> program_order(const ir::Graph& graph) {
  std::vector<ir::Vertex> order;
  for (ir::Vertex v = 0; v < graph.size(); ++v) {
    for (ir::Vertex u : graph.inputs_of(v)) {
      if (u >= v) return graph.topological_order();
    }
    order.push_back(v);
  }
  return order;
}

CutPoints candidate_cuts(const ir::Graph& graph, const std::vector<ir::Vertex>& order, const std::vector<int>& extra) {
  const int n = static_cast<int>(order.size());
  const auto pos = positions_of(graph, order);
  int first_op = n, last_op = -1;
  for (int i = 0; i < n; ++i) {
    const ir::Node& node = graph.node(order[i]);
    if (!is_placeholder(node)) first_op = std::min(first_op, i);
    if (!is_output(node)) last_op = std::max(last_op, i);
  }
  // live[p]: tensors produced before p and read at or after p.
  std::vector<int> live(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    int last = i;
    for (const auto& [user, index] : graph.users_of(order[i])) last = std::max(last, pos[user]);
    if (last > i) {
      live[i + 1] += 1;
      live[last + 1] -= 1;
    }
  }
  for (int p = 1; p <= n; ++p) live[p] += live[p - 1];
  CutPoints out;
  std::set<int> cuts;
  int best = -1;
  for (int p = first_op + 1; p <= last_op; ++p) {
    if (best < 0 || live[p] < best) {
      best = live[p];
      cuts.clear();
    }
    if (live[p] == best) cuts.insert(p);
  }
  for (int p : extra) {
    if (p > first_op && p <= last_op) cuts.insert(p);
  }
  out.crossing = std::max(best, 0);
  // Merge segments until each tensor's readers outside its own segment lie in one segment.
  for (bool changed = true; changed;) {
    changed = false;
    const std::vector<int> sorted(cuts.begin(), cuts.end());
    auto segment = [&](int p) { return static_cast<int>(std::upper_bound(sorted.begin(), sorted.end(), p) - sorted.begin()); };
    for (int i = 0; i < n && !changed; ++i) {
      const int own = segment(i);
      int low = -1, high = -1;
      for (const auto& [user, index] : graph.users_of(order[i])) {
        const int s = segment(pos[user]);
        if (s == own) continue;
        low = low < 0 ? s : std::min(low, s);
        high = std::max(high, s);
      }
      if (low >= 0 && low != high) {
        // Drop the cuts that start segments low+1 .. high.
        for (int s = low + 1; s <= high; ++s) cuts.erase(sorted[s - 1]);
        changed = true;
      }
    }
  }
  out.positions.assign(cuts.begin(), cuts.end());
  return out;
}

std::vector<int> fairscale_shards(const ir::Graph& graph, const std::vector<ir::Vertex>& order, int shard_count) {
  const int n = static_cast<int>(order.size());
  const auto counts = module_param_counts(graph, order);
  const int64_t per_shard = counts.at("") / shard_count;
  // _get_count: the node's own module, else the module named by its first "_" field; none = not counted.
  std::vector<int64_t> charge(n, 0);
  std::vector<std::string> names(n);
  for (int i = 0; i < n; ++i) {
    names[i] = fx_name(graph.node(order[i]).name);
    auto it = counts.find(names[i]);
    if (it == counts.end()) it = counts.find(names[i].substr(0, names[i].find('_')));
    if (it != counts.end()) charge[i] = it->second;
  }
  const auto pos = positions_of(graph, order);
  std::vector<int> shard(n, -1);
  std::vector<int> so_far;  // positions assigned so far, in order (fairscale's nodes_so_far)
  int shard_id = 0;
  auto shard_params = [&](int id) {
    int64_t total = 0;
    for (int p : so_far) total += shard[p] == id ? charge[p] : 0;
    return total;
  };
  for (int i = 0; i < n; ++i) {
    const ir::Node& node = graph.node(order[i]);
    if (is_output(node)) break;
    if (!is_placeholder(node)) {
      int min_shard = shard_id;
      int min_pos = -1;
      for (ir::Vertex u : graph.inputs_of(order[i])) {
        const int p = pos[u];
        if (shard[p] < 0 || (!so_far.empty() && p == so_far.back())) continue;
        if (shard[p] < min_shard) {
          min_shard = shard[p];
          min_pos = p;
        }
      }
      if (min_shard < shard_id) {
        for (auto it = so_far.rbegin(); it != so_far.rend(); ++it) {
          shard[*it] = min_shard;
          if (*it == min_pos) break;
        }
        shard_id = min_shard;
      }
    }
    shard[i] = shard_id;
    so_far.push_back(i);
    if (!is_placeholder(node) && shard_params(shard_id) > per_shard) ++shard_id;
  }
  return shard;
}

std::vector<int> shard_starts(const std::vector<int>& shards) {
  std::vector<int> starts;
  int current = -1;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    if (shards[i] < 0) continue;
    if (current >= 0 && shards[i] != current) starts.push_back(static_cast<int>(i));
    current = shards[i];
  }
  return starts;
}

}  // namespace shardsynth::synth
