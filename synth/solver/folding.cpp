#include "synth/solver/folding.hpp"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "synth/solver/usage_profile.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// The problem while it is being folded, in rounds: arc consistency, fixing
// nodes left with one strategy, choosing a leader for every follower (a
// forest, by union-find), then contracting every tree into its root in one
// pass over the edges. Strategy indices never change (a dropped strategy's
// cost becomes kForbidden), so the maps recorded for folded followers stay
// valid until the end. Each round is linear in nodes and edges (times the
// table sizes); rounds repeat while they change something.
class Folder {
 public:
  Folder(const Problem& problem, std::optional<Clock::time_point> deadline) : problem_(problem), deadline_(deadline) {
    const int n = static_cast<int>(problem.nodes.size());
    nodes_.resize(n);
    for (int i = 0; i < n; ++i) nodes_[i].costs = problem.nodes[i].costs;
    drop_over_limit();
    std::vector<Edge> edges;
    for (const auto& edge : problem.edges) edges.push_back({edge.from, edge.to, edge.costs});
    set_edges(std::move(edges));
  }

  FoldedProblem run() {
    for (int round = 0; !result_.infeasible; ++round) {
      if (out_of_time()) break;
      const bool pruned = make_arc_consistent();
      if (result_.infeasible || out_of_time()) break;
      const bool fixed = fix_single();
      const bool folded = fold_followers();
      if (!pruned && !fixed && !folded) break;
    }
    return finish();
  }

 private:
  struct Node {
    std::vector<int64_t> costs;  // per original strategy; kForbidden = dropped
    bool alive = true;           // false once fixed or folded
  };
  struct Edge {
    int a = 0, b = 0;            // end nodes; the table is row-major [strategy of a][strategy of b]
    std::vector<int64_t> table;  // costs over original strategy indices
  };

  bool out_of_time() const { return deadline_ && Clock::now() >= *deadline_; }
  int size(int u) const { return static_cast<int>(nodes_[u].costs.size()); }
  bool live(int u, int s) const { return nodes_[u].costs[s] < kForbidden; }
  // Entry of edge e for strategy su of u and sv of the other end.
  int64_t entry(const Edge& e, int u, int su, int sv) const {
    return e.a == u ? e.table[static_cast<std::size_t>(su) * size(e.b) + sv]
                    : e.table[static_cast<std::size_t>(sv) * size(e.b) + su];
  }

  // Forbids strategies whose usage alone breaks the limit while every other
  // node live at the same time takes its least usage.
  void drop_over_limit() {
    if (!problem_.usage_limit) return;
    const std::vector<int64_t> points = usage_check_points(problem_);
    auto slot = [&](int64_t t) { return static_cast<int>(std::lower_bound(points.begin(), points.end(), t) - points.begin()); };
    UsageProfile floors(static_cast<int>(points.size()));
    std::vector<int64_t> least(problem_.nodes.size(), 0);
    for (std::size_t i = 0; i < problem_.nodes.size(); ++i) {
      const auto& node = problem_.nodes[i];
      if (node.usages.empty()) continue;
      least[i] = *std::min_element(node.usages.begin(), node.usages.end());
      floors.add(slot(node.live_from), slot(node.live_to), least[i]);
    }
    for (std::size_t i = 0; i < problem_.nodes.size(); ++i) {
      const auto& node = problem_.nodes[i];
      if (node.usages.empty() || node.live_from >= node.live_to) continue;
      const int64_t peak = floors.max(slot(node.live_from), slot(node.live_to));
      for (int s = 0; s < node.size(); ++s) {
        if (peak - least[i] + node.usages[s] > *problem_.usage_limit) nodes_[i].costs[s] = kForbidden;
      }
    }
  }

  // Installs `edges` as the graph's edges: self-loops become node costs
  // (their diagonal) and parallel edges are summed, in one pass.
  void set_edges(std::vector<Edge> edges) {
    edges_.clear();
    std::unordered_map<uint64_t, int> index;  // (low node, high node) -> edge
    index.reserve(edges.size() * 2);
    for (auto& edge : edges) {
      const int a = edge.a, b = edge.b;
      if (a == b) {
        for (int s = 0; s < size(a); ++s) {
          nodes_[a].costs[s] = cost_add(nodes_[a].costs[s], edge.table[static_cast<std::size_t>(s) * size(a) + s]);
        }
        continue;
      }
      const uint64_t key = (static_cast<uint64_t>(std::min(a, b)) << 32) | static_cast<uint32_t>(std::max(a, b));
      const auto [it, fresh] = index.emplace(key, static_cast<int>(edges_.size()));
      if (fresh) {
        edges_.push_back(std::move(edge));
        continue;
      }
      Edge& into = edges_[it->second];
      const int cols = size(b);
      for (int s = 0; s < size(a); ++s) {
        for (int t = 0; t < cols; ++t) {
          int64_t& cell = into.a == a ? into.table[static_cast<std::size_t>(s) * cols + t]
                                      : into.table[static_cast<std::size_t>(t) * size(a) + s];
          cell = cost_add(cell, edge.table[static_cast<std::size_t>(s) * cols + t]);
        }
      }
    }
    incident_.assign(nodes_.size(), {});
    for (std::size_t e = 0; e < edges_.size(); ++e) {
      incident_[edges_[e].a].push_back(static_cast<int>(e));
      incident_[edges_[e].b].push_back(static_cast<int>(e));
    }
  }

  // Drops strategies of u with no allowed partner on edge e; true when any went.
  bool revise(int u, const Edge& e) {
    const int v = e.a == u ? e.b : e.a;
    bool changed = false;
    for (int s = 0; s < size(u); ++s) {
      if (!live(u, s)) continue;
      bool supported = false;
      for (int t = 0; t < size(v) && !supported; ++t) supported = live(v, t) && entry(e, u, s, t) < kForbidden;
      if (!supported) {
        nodes_[u].costs[s] = kForbidden;
        changed = true;
      }
    }
    return changed;
  }

  // Revises every edge both ways until nothing changes; true when a strategy went.
  bool make_arc_consistent() {
    std::deque<int> work;
    std::vector<char> queued(nodes_.size(), 0);
    for (std::size_t u = 0; u < nodes_.size(); ++u) {
      if (nodes_[u].alive) work.push_back(static_cast<int>(u)), queued[u] = 1;
    }
    bool changed = false;
    while (!work.empty()) {
      const int u = work.front();
      work.pop_front();
      queued[u] = 0;
      for (int e : incident_[u]) {
        const int v = edges_[e].a == u ? edges_[e].b : edges_[e].a;
        if (revise(v, edges_[e])) {
          changed = true;
          if (!queued[v]) work.push_back(v), queued[v] = 1;
        }
      }
      if (std::none_of(nodes_[u].costs.begin(), nodes_[u].costs.end(), [](int64_t c) { return c < kForbidden; })) {
        result_.infeasible = true;
        return changed;
      }
    }
    return changed;
  }

  // Fixes every node with one live strategy; its edges become its
  // neighbours' costs. True when any was fixed.
  bool fix_single() {
    std::vector<int> single(nodes_.size(), -1);
    bool any = false;
    for (std::size_t u = 0; u < nodes_.size(); ++u) {
      if (!nodes_[u].alive) continue;
      int count = 0, which = -1;
      for (int s = 0; s < size(static_cast<int>(u)); ++s) {
        if (live(static_cast<int>(u), s)) ++count, which = s;
      }
      if (count != 1) continue;
      single[u] = which;
      any = true;
    }
    if (!any) return false;
    std::vector<Edge> kept;
    for (auto& edge : edges_) {
      const int sa = single[edge.a], sb = single[edge.b];
      if (sa < 0 && sb < 0) {
        kept.push_back(std::move(edge));
      } else if (sa >= 0 && sb >= 0) {
        result_.constant = cost_add(result_.constant, entry(edge, edge.a, sa, sb));
      } else {
        const int v = sa >= 0 ? edge.b : edge.a, s = std::max(sa, sb);
        for (int t = 0; t < size(v); ++t) nodes_[v].costs[t] = cost_add(nodes_[v].costs[t], entry(edge, v, t, s));
      }
    }
    for (std::size_t u = 0; u < nodes_.size(); ++u) {
      if (single[u] < 0) continue;
      result_.constant = cost_add(result_.constant, nodes_[u].costs[single[u]]);
      nodes_[u].alive = false;
      fixed_.push_back({static_cast<int>(u), single[u]});
      ++result_.fixed_nodes;
    }
    set_edges(std::move(kept));
    return true;
  }

  // When every live strategy of `leader` allows exactly one live strategy of
  // `follower` on edge e, that function (per leader strategy; -1 where dead).
  std::optional<std::vector<int>> follows(int follower, int leader, const Edge& e) const {
    std::vector<int> f(size(leader), -1);
    for (int s = 0; s < size(leader); ++s) {
      if (!live(leader, s)) continue;
      for (int t = 0; t < size(follower); ++t) {
        if (!live(follower, t) || entry(e, leader, s, t) >= kForbidden) continue;
        if (f[s] >= 0) return std::nullopt;
        f[s] = t;
      }
      if (f[s] < 0) return std::nullopt;  // arc consistency drops s first
    }
    return f;
  }

  // Chooses a leader for every follower it can (a forest: no leader chain
  // closes a cycle), then contracts every tree into its root. True when any
  // node was folded.
  bool fold_followers() {
    const int n = static_cast<int>(nodes_.size());
    std::vector<int> set(n);
    for (int u = 0; u < n; ++u) set[u] = u;
    auto find = [&](int u) {
      while (set[u] != u) u = set[u] = set[set[u]];
      return u;
    };
    std::vector<int> leader(n, -1);
    std::vector<std::vector<int>> map(n);
    bool any = false;
    for (const auto& edge : edges_) {
      const int a = edge.a, b = edge.b;
      if (find(a) == find(b)) continue;
      std::optional<std::vector<int>> f;
      int follower = -1, lead = -1;
      if (leader[b] < 0 && (f = follows(b, a, edge))) {
        follower = b, lead = a;
      } else if (leader[a] < 0 && (f = follows(a, b, edge))) {
        follower = a, lead = b;
      }
      if (follower < 0) continue;
      leader[follower] = lead;
      map[follower] = std::move(*f);
      set[find(follower)] = find(lead);
      any = true;
    }
    if (!any) return false;
    // Roots and maps: F[v][s] = v's strategy when its root takes s.
    std::vector<int> root(n, -1);
    std::vector<std::vector<int>> through(n);
    std::vector<int> chain;
    for (int u = 0; u < n; ++u) {
      if (!nodes_[u].alive || root[u] >= 0) continue;
      chain.clear();
      int v = u;
      while (leader[v] >= 0 && root[v] < 0) chain.push_back(v), v = leader[v];
      if (root[v] < 0) {  // v is a root
        root[v] = v;
        through[v].resize(size(v));
        for (int s = 0; s < size(v); ++s) through[v][s] = live(v, s) ? s : -1;
      }
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const int w = *it, up = leader[w];
        root[w] = root[up];
        const auto& above = through[up];
        auto& mine = through[w];
        mine.resize(above.size());
        for (std::size_t s = 0; s < above.size(); ++s) mine[s] = above[s] < 0 ? -1 : map[w][above[s]];
      }
    }
    // Costs of each class onto its root, edges onto their roots' pair.
    for (int v = 0; v < n; ++v) {
      if (!nodes_[v].alive || root[v] == v) continue;
      const int r = root[v];
      for (int s = 0; s < size(r); ++s) {
        if (through[v][s] >= 0) nodes_[r].costs[s] = cost_add(nodes_[r].costs[s], nodes_[v].costs[through[v][s]]);
      }
    }
    std::vector<Edge> moved;
    moved.reserve(edges_.size());
    for (auto& edge : edges_) {
      const int a = edge.a, b = edge.b, ra = root[a], rb = root[b];
      if (ra == a && rb == b) {
        moved.push_back(std::move(edge));
        continue;
      }
      const int rows = size(ra), cols = size(rb);
      if (ra == rb) {  // inside one class: a cost of the root
        for (int s = 0; s < rows; ++s) {
          if (through[a][s] >= 0) nodes_[ra].costs[s] = cost_add(nodes_[ra].costs[s], entry(edge, a, through[a][s], through[b][s]));
        }
        continue;
      }
      Edge out{ra, rb, std::vector<int64_t>(static_cast<std::size_t>(rows) * cols, 0)};
      for (int s = 0; s < rows; ++s) {
        if (through[a][s] < 0) continue;
        for (int t = 0; t < cols; ++t) {
          if (through[b][t] >= 0) out.table[static_cast<std::size_t>(s) * cols + t] = entry(edge, a, through[a][s], through[b][t]);
        }
      }
      moved.push_back(std::move(out));
    }
    for (int v = 0; v < n; ++v) {
      if (!nodes_[v].alive || root[v] == v) continue;
      nodes_[v].alive = false;
      folded_.push_back({v, root[v], std::move(through[v])});
      ++result_.folded_followers;
    }
    set_edges(std::move(moved));
    return true;
  }

  FoldedProblem finish() {
    FoldedProblem& out = result_;
    out.usage_limit = problem_.usage_limit;
    out.kernel.name = problem_.name;
    const int n = static_cast<int>(nodes_.size());
    if (out.infeasible) return std::move(out);
    // Kernel nodes: the live ones, their live strategies in index order.
    out.root.assign(n, -1);
    out.strategy_of.assign(n, {});
    std::vector<int> kernel_index(n, -1);
    std::vector<std::vector<int>> kernel_strategy(n);  // per live node: original strategy -> kernel strategy
    for (int u = 0; u < n; ++u) {
      if (!nodes_[u].alive) continue;
      if (std::none_of(nodes_[u].costs.begin(), nodes_[u].costs.end(), [](int64_t c) { return c < kForbidden; })) {
        out.infeasible = true;  // folding stopped (deadline) before this node was examined
        return std::move(out);
      }
      kernel_index[u] = static_cast<int>(out.kernel.nodes.size());
      ProblemNode node;
      node.label = problem_.nodes[u].label;
      kernel_strategy[u].assign(size(u), -1);
      for (int s = 0; s < size(u); ++s) {
        if (!live(u, s)) continue;
        kernel_strategy[u][s] = node.size();
        node.costs.push_back(nodes_[u].costs[s]);
        out.strategy_of[u].push_back(s);
      }
      out.root[u] = kernel_index[u];
      out.kernel.nodes.push_back(std::move(node));
    }
    for (const auto& edge : edges_) {
      const int a = edge.a, b = edge.b;
      ProblemEdge k;
      k.from = kernel_index[a];
      k.to = kernel_index[b];
      for (int s : out.strategy_of[a]) {
        for (int t : out.strategy_of[b]) k.costs.push_back(edge.table[static_cast<std::size_t>(s) * size(b) + t]);
      }
      out.kernel.edges.push_back(std::move(k));
    }
    for (const auto& [u, s] : fixed_) out.strategy_of[u] = {s};
    // Followers, last folded first: each one's leader is resolved by then.
    for (auto it = folded_.rbegin(); it != folded_.rend(); ++it) {
      out.root[it->follower] = out.root[it->leader];
      std::vector<int>& mine = out.strategy_of[it->follower];
      for (int s : out.strategy_of[it->leader]) mine.push_back(it->map[s]);
    }
    build_usage(out);
    return std::move(out);
  }

  void build_usage(FoldedProblem& out) const {
    const std::vector<int64_t> points = usage_check_points(problem_);
    out.slot_times = points;
    auto slot = [&](int64_t t) { return static_cast<int>(std::lower_bound(points.begin(), points.end(), t) - points.begin()); };
    std::vector<int64_t> delta(points.size() + 1, 0);
    out.pieces.assign(out.kernel.nodes.size(), {});
    for (std::size_t o = 0; o < problem_.nodes.size(); ++o) {
      const auto& node = problem_.nodes[o];
      if (node.usages.empty() || node.live_from >= node.live_to) continue;
      const int from = slot(node.live_from), to = slot(node.live_to);
      if (from >= to) continue;
      std::vector<int64_t> usages;
      for (int s : out.strategy_of[o]) usages.push_back(node.usages[s]);
      const int64_t least = *std::min_element(usages.begin(), usages.end());
      delta[from] += least;
      delta[to] -= least;
      if (out.root[o] < 0 || std::all_of(usages.begin(), usages.end(), [&](int64_t x) { return x == least; })) continue;
      for (int64_t& x : usages) x -= least;
      out.pieces[out.root[o]].push_back({from, to, std::move(usages)});
    }
    out.base.assign(points.size(), 0);
    int64_t running = 0;
    for (std::size_t t = 0; t < points.size(); ++t) out.base[t] = running += delta[t];
    for (auto& list : out.pieces) {  // one piece per range
      std::sort(list.begin(), list.end(), [](const UsagePiece& x, const UsagePiece& y) {
        return x.from != y.from ? x.from < y.from : x.to < y.to;
      });
      std::vector<UsagePiece> merged;
      for (auto& piece : list) {
        if (!merged.empty() && merged.back().from == piece.from && merged.back().to == piece.to) {
          for (std::size_t k = 0; k < piece.usages.size(); ++k) merged.back().usages[k] += piece.usages[k];
        } else {
          merged.push_back(std::move(piece));
        }
      }
      list = std::move(merged);
    }
  }

  struct Folded {
    int follower = 0;      // the folded node
    int leader = 0;        // the node it was folded into
    std::vector<int> map;  // per original strategy of the leader: the follower's strategy (-1 where dead)
  };

  const Problem& problem_;
  std::optional<Clock::time_point> deadline_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::vector<std::vector<int>> incident_;  // per node: its edges
  std::vector<std::pair<int, int>> fixed_;  // (node, its only strategy), in fixing order
  std::vector<Folded> folded_;              // in folding order
  FoldedProblem result_;
};

}  // namespace

FoldedProblem fold_problem(const Problem& problem, std::optional<Clock::time_point> deadline) {
  return Folder(problem, deadline).run();
}

Assignment unfold(const FoldedProblem& folded, const Assignment& kernel_assignment) {
  Assignment out(folded.root.size(), 0);
  for (std::size_t o = 0; o < out.size(); ++o) {
    const int r = folded.root[o];
    out[o] = r < 0 ? folded.strategy_of[o][0] : folded.strategy_of[o][kernel_assignment[r]];
  }
  return out;
}

Assignment fold_assignment(const FoldedProblem& folded, const Assignment& original) {
  if (original.size() != folded.root.size()) return {};
  std::vector<std::vector<char>> fits(folded.kernel.nodes.size());
  for (std::size_t k = 0; k < fits.size(); ++k) fits[k].assign(folded.kernel.nodes[k].size(), 1);
  for (std::size_t o = 0; o < original.size(); ++o) {
    const int k = folded.root[o];
    if (k < 0) continue;
    for (std::size_t s = 0; s < fits[k].size(); ++s) {
      if (folded.strategy_of[o][s] != original[o]) fits[k][s] = 0;
    }
  }
  Assignment plan(fits.size());
  for (std::size_t k = 0; k < fits.size(); ++k) {
    const auto at = std::find(fits[k].begin(), fits[k].end(), 1);
    if (at == fits[k].end()) return {};
    plan[k] = static_cast<int>(at - fits[k].begin());
  }
  return plan;
}

std::vector<int64_t> usage_profile_of(const FoldedProblem& folded, const Assignment& kernel_assignment) {
  std::vector<int64_t> delta(folded.base.size() + 1, 0);
  for (std::size_t u = 0; u < folded.pieces.size(); ++u) {
    for (const auto& piece : folded.pieces[u]) {
      delta[piece.from] += piece.usages[kernel_assignment[u]];
      delta[piece.to] -= piece.usages[kernel_assignment[u]];
    }
  }
  std::vector<int64_t> out(folded.base.size());
  int64_t running = 0;
  for (std::size_t t = 0; t < out.size(); ++t) out[t] = folded.base[t] + (running += delta[t]);
  return out;
}

}  // namespace shardsynth::synth
