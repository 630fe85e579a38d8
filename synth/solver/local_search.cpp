#include "synth/solver/local_search.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace shardsynth::synth {

LocalSearch::LocalSearch(const FoldedProblem& folded)
    : folded_(folded), kernel_(folded.kernel), limit_(folded.usage_limit), incidences_(incidence_lists(folded.kernel)) {
  const int slots = static_cast<int>(folded.base.size());
  cover_.assign(2 * static_cast<std::size_t>(std::max(slots, 1)), {});
  stamp_.assign(kernel_.nodes.size(), 0);
  for (std::size_t u = 0; u < folded.pieces.size(); ++u) {
    for (const auto& p : folded.pieces[u]) {
      for (int l = p.from + slots, r = p.to + slots; l < r; l >>= 1, r >>= 1) {
        if (l & 1) cover_[l++].push_back(static_cast<int>(u));
        if (r & 1) cover_[--r].push_back(static_cast<int>(u));
      }
    }
  }
}

std::vector<int> LocalSearch::covering(int slot) {
  ++query_;
  std::vector<int> out;
  for (int i = slot + static_cast<int>(folded_.base.size()); i >= 1; i >>= 1) {
    for (int u : cover_[i]) {
      if (stamp_[u] != query_) stamp_[u] = query_, out.push_back(u);
    }
  }
  std::sort(out.begin(), out.end());  // a fixed order, whatever the tree's
  return out;
}

void LocalSearch::set(const Assignment& x) {
  x_ = x;
  profile_ = UsageProfile(usage_profile_of(folded_, x_));
}

int64_t LocalSearch::cost() const { return cost_without_usage(kernel_, x_); }

int64_t LocalSearch::local_cost(int u, int s) const {
  int64_t c = kernel_.nodes[u].costs[s];
  if (c >= kForbidden) return kForbidden;
  for (const auto& inc : incidences_[u]) {
    const auto& e = kernel_.edges[inc.edge];
    const std::size_t cols = kernel_.nodes[e.to].costs.size();
    const int64_t v = inc.is_from ? e.costs[s * cols + x_[inc.other]] : e.costs[x_[inc.other] * cols + s];
    c = cost_add(c, v);  // saturates: many large entries may sum past int64
    if (c >= kForbidden) return kForbidden;
  }
  return c;
}

bool LocalSearch::move(int u, int s, bool force) {
  const int from = x_[u];
  if (from == s) return true;
  const auto& pieces = folded_.pieces[u];
  for (const auto& p : pieces) profile_.add(p.from, p.to, p.usages[s] - p.usages[from]);
  if (!force && limit_) {
    for (const auto& p : pieces) {
      if (p.usages[s] > p.usages[from] && profile_.max(p.from, p.to) > *limit_) {
        for (const auto& q : pieces) profile_.add(q.from, q.to, q.usages[from] - q.usages[s]);
        return false;
      }
    }
  }
  x_[u] = s;
  return true;
}

long LocalSearch::descend(const std::vector<int>& order, const std::vector<std::vector<double>>* penalty, bool keep_limit,
                          int max_visits) {
  long moves = 0;
  std::vector<std::pair<double, int>> candidates;
  for (int visit = 0; visit < max_visits; ++visit) {
    long moved = 0;
    for (int u : order) {
      const int n = kernel_.nodes[u].size();
      if (n < 2) continue;
      auto score = [&](int s) {
        const int64_t c = local_cost(u, s);
        if (c >= kForbidden) return std::numeric_limits<double>::infinity();
        return static_cast<double>(c) + (penalty ? (*penalty)[u][s] : 0.0);
      };
      const double here = score(x_[u]);
      candidates.clear();
      for (int s = 0; s < n; ++s) {
        if (s == x_[u]) continue;
        const double v = score(s);
        // Strictly better by a margin that floating point noise cannot fake.
        if (v < here - 1e-9 * (1.0 + std::abs(here))) candidates.emplace_back(v, s);
      }
      if (candidates.empty()) continue;
      std::sort(candidates.begin(), candidates.end());
      for (const auto& [v, s] : candidates) {
        if (move(u, s, !keep_limit)) {
          ++moved;
          break;
        }
      }
    }
    moves += moved;
    if (moved == 0) break;
  }
  return moves;
}

long LocalSearch::forest_move(std::mt19937_64& rng, const std::vector<std::vector<double>>* penalty) {
  const int n = static_cast<int>(kernel_.nodes.size());
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<int> order(n);
  for (int u = 0; u < n; ++u) order[u] = u;
  std::shuffle(order.begin(), order.end(), rng);
  // A maximal induced forest, grown in random order with union-find: a node
  // joins when its neighbours already in lie in pairwise different trees.
  std::vector<int> parent(n), in(n, 0);
  for (int u = 0; u < n; ++u) parent[u] = u;
  auto find = [&](int u) {
    while (parent[u] != u) u = parent[u] = parent[parent[u]];
    return u;
  };
  std::vector<int> roots;
  for (int u : order) {
    roots.clear();
    bool ok = true;
    for (const auto& inc : incidences_[u]) {
      if (!in[inc.other]) continue;
      const int r = find(inc.other);
      if (std::find(roots.begin(), roots.end(), r) != roots.end()) {
        ok = false;
        break;
      }
      roots.push_back(r);
    }
    if (!ok) continue;
    in[u] = 1;
    for (int r : roots) parent[r] = u;
  }
  // Unary terms: own cost, penalty, and edges to nodes outside the forest.
  std::vector<std::vector<double>> unary(n);
  for (int u = 0; u < n; ++u) {
    if (!in[u]) continue;
    const int sizes = kernel_.nodes[u].size();
    unary[u].assign(sizes, 0.0);
    for (int s = 0; s < sizes; ++s) {
      int64_t c = kernel_.nodes[u].costs[s];
      bool forbidden = c >= kForbidden;
      for (const auto& inc : incidences_[u]) {
        if (forbidden || in[inc.other]) continue;
        const auto& e = kernel_.edges[inc.edge];
        const std::size_t cols = kernel_.nodes[e.to].costs.size();
        const int64_t v = inc.is_from ? e.costs[s * cols + x_[inc.other]] : e.costs[x_[inc.other] * cols + s];
        c = cost_add(c, v);
        if (c >= kForbidden) forbidden = true;
      }
      unary[u][s] = forbidden ? kInf : static_cast<double>(c) + (penalty ? (*penalty)[u][s] : 0.0);
    }
  }
  // Each tree: an order where parents come first, then messages leaves-up.
  std::vector<int> seen(n, 0), tree_parent(n, -1), parent_edge(n, -1), visit;
  std::vector<char> parent_is_from(n, 0);
  long moved = 0;
  for (int root = 0; root < n; ++root) {
    if (!in[root] || seen[root]) continue;
    visit.clear();
    visit.push_back(root);
    seen[root] = 1;
    for (std::size_t k = 0; k < visit.size(); ++k) {
      const int u = visit[k];
      for (const auto& inc : incidences_[u]) {
        if (!in[inc.other] || seen[inc.other]) continue;
        seen[inc.other] = 1;
        tree_parent[inc.other] = u;
        parent_edge[inc.other] = inc.edge;
        parent_is_from[inc.other] = inc.is_from ? 1 : 0;  // whether the parent is the edge's `from`
        visit.push_back(inc.other);
      }
    }
    // total[u][s]: best cost of u's subtree with u at s; choice per child and parent strategy.
    std::vector<std::vector<double>> total(visit.size());
    std::unordered_map<int, int> local;
    for (std::size_t k = 0; k < visit.size(); ++k) local[visit[k]] = static_cast<int>(k);
    for (std::size_t k = 0; k < visit.size(); ++k) total[k] = unary[visit[k]];
    std::vector<std::vector<int>> best_child(visit.size());  // per node: its best strategy per parent strategy
    for (std::size_t k = visit.size(); k-- > 1;) {
      const int c = visit[k];
      const int p = tree_parent[c];
      const auto& e = kernel_.edges[parent_edge[c]];
      const int sp = kernel_.nodes[p].size(), sc = kernel_.nodes[c].size();
      const std::size_t cols = kernel_.nodes[e.to].costs.size();
      best_child[k].assign(sp, 0);
      auto& pt = total[local[p]];
      for (int a = 0; a < sp; ++a) {
        double best = kInf;
        int arg = x_[c];
        for (int b = 0; b < sc; ++b) {
          if (total[k][b] == kInf) continue;
          const int64_t v = parent_is_from[c] ? e.costs[a * cols + b] : e.costs[b * cols + a];
          if (v >= kForbidden) continue;
          const double t = total[k][b] + static_cast<double>(v);
          if (t < best) best = t, arg = b;
        }
        best_child[k][a] = arg;
        pt[a] += best;
      }
    }
    // Keep the current strategies unless the tree gets strictly cheaper.
    const auto& rt = total[0];
    int arg = x_[root];
    for (int s = 0; s < static_cast<int>(rt.size()); ++s) {
      if (rt[s] < rt[arg] - 1e-9 * (1.0 + std::abs(rt[arg]))) arg = s;
    }
    if (rt[arg] == kInf) continue;
    std::vector<int> pick(visit.size());
    pick[0] = arg;
    for (std::size_t k = 1; k < visit.size(); ++k) pick[k] = best_child[k][pick[local[tree_parent[visit[k]]]]];
    if (arg == x_[root]) {
      // Same root strategy: only move when the subtree optimum beats the current one.
      double now = 0;
      for (std::size_t k = 0; k < visit.size(); ++k) now += unary[visit[k]][x_[visit[k]]];
      for (std::size_t k = 1; k < visit.size(); ++k) {
        const int c = visit[k];
        const auto& e = kernel_.edges[parent_edge[c]];
        const std::size_t cols = kernel_.nodes[e.to].costs.size();
        const int a = x_[tree_parent[c]], b = x_[c];
        now += static_cast<double>(parent_is_from[c] ? e.costs[a * cols + b] : e.costs[b * cols + a]);
      }
      if (!(rt[arg] < now - 1e-9 * (1.0 + std::abs(now)))) continue;
    }
    for (std::size_t k = 0; k < visit.size(); ++k) {
      if (pick[k] != x_[visit[k]]) {
        move(visit[k], pick[k], true);
        ++moved;
      }
    }
  }
  return moved;
}

int64_t LocalSearch::usage_at(int u, int s, int slot) const {
  int64_t sum = 0;
  for (const auto& p : folded_.pieces[u]) {
    if (p.from <= slot && slot < p.to) sum += p.usages[s];
  }
  return sum;
}

bool LocalSearch::repair(const std::vector<std::vector<double>>* penalty, int max_moves) {
  if (!limit_) return true;
  const int nodes = static_cast<int>(kernel_.nodes.size());
  struct Candidate {
    double score;  // extra (priced) cost per byte freed at the slot
    int node;      // kernel node
    int strategy;  // its new strategy
  };
  std::vector<Candidate> candidates;
  std::vector<char> moved(nodes, 0);
  int moves = 0;
  while (moves < max_moves) {
    const int slot = profile_.first_above(0, profile_.slots(), *limit_);
    if (slot < 0) return true;
    // Every move that frees memory at the slot, scored once; then the
    // cheapest per byte are made until the slot fits.
    candidates.clear();
    for (int u : covering(slot)) {
      const int64_t now_used = usage_at(u, x_[u], slot);
      const int64_t now_cost = local_cost(u, x_[u]);
      const double now_pen = penalty ? (*penalty)[u][x_[u]] : 0.0;
      for (int s = 0; s < kernel_.nodes[u].size(); ++s) {
        const int64_t freed = now_used - usage_at(u, s, slot);
        if (freed <= 0) continue;
        const int64_t c = local_cost(u, s);
        if (c >= kForbidden) continue;
        const double extra = static_cast<double>(c - now_cost) + (penalty ? (*penalty)[u][s] - now_pen : 0.0);
        candidates.push_back({extra / static_cast<double>(freed), u, s});
      }
    }
    if (candidates.empty()) return false;
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.score != b.score ? a.score < b.score : (a.node != b.node ? a.node < b.node : a.strategy < b.strategy);
    });
    std::fill(moved.begin(), moved.end(), 0);
    bool progress = false;
    for (const auto& c : candidates) {
      if (profile_.at(slot) <= *limit_ || moves >= max_moves) break;
      if (moved[c.node]) continue;  // its score assumed the old neighbourhood
      moved[c.node] = 1;
      move(c.node, c.strategy, true);
      ++moves;
      progress = true;
    }
    if (!progress) return false;
  }
  return profile_.first_above(0, profile_.slots(), *limit_) < 0;
}

}  // namespace shardsynth::synth
