// LocalSearch::forest_move (local_search.hpp): a maximal induced forest of
// the kernel graph, grown in random order, re-optimized tree by tree by
// dynamic programming with the other nodes fixed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "synth/solver/local_search.hpp"

namespace shardsynth::synth {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A maximal induced forest, grown in random order with union-find: a node
// joins when its neighbours already in lie in pairwise different trees.
// Returns per node whether it is in.
std::vector<int> grow_forest(const std::vector<std::vector<Incidence>>& incidences, std::mt19937_64& rng) {
  const int n = static_cast<int>(incidences.size());
  std::vector<int> order(n);
  for (int u = 0; u < n; ++u) order[u] = u;
  std::shuffle(order.begin(), order.end(), rng);
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
    for (const auto& inc : incidences[u]) {
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
  return in;
}

// One tree of the forest: its nodes with parents first (the Forest keeps
// per node its parent, the edge to it, its index in `visit`, and whether
// the parent is that edge's `from`).
struct ForestTree {
  std::vector<int> visit;  // kernel nodes, root first, parents before children
};

}  // namespace

// The pieces of forest_move that need the current assignment.
class LocalSearch::Forest {
 public:
  Forest(const LocalSearch& search, std::vector<int> in, const std::vector<std::vector<double>>* penalty)
      : s_(search), in_(std::move(in)), n_(static_cast<int>(in_.size())), seen_(n_, 0), tree_parent_(n_, -1),
        parent_edge_(n_, -1), parent_is_from_(n_, 0), local_(n_, -1) {
    unary_terms(penalty);
  }

  // The next tree from `root` (empty when root is out or seen already).
  ForestTree tree_at(int root) {
    ForestTree tree;
    if (!in_[root] || seen_[root]) return tree;
    tree.visit.push_back(root);
    seen_[root] = 1;
    for (std::size_t k = 0; k < tree.visit.size(); ++k) {
      const int u = tree.visit[k];
      for (const auto& inc : s_.incidences_[u]) {
        if (!in_[inc.other] || seen_[inc.other]) continue;
        seen_[inc.other] = 1;
        tree_parent_[inc.other] = u;
        parent_edge_[inc.other] = inc.edge;
        parent_is_from_[inc.other] = inc.is_from ? 1 : 0;
        tree.visit.push_back(inc.other);
      }
    }
    for (std::size_t k = 0; k < tree.visit.size(); ++k) local_[tree.visit[k]] = static_cast<int>(k);
    return tree;
  }

  // The tree's best strategies (one per visited node), or empty when the
  // tree is best left as it is.
  std::vector<int> best_picks(const ForestTree& tree) const {
    const auto& visit = tree.visit;
    std::vector<std::vector<double>> total(visit.size());  // best cost of each subtree per own strategy
    for (std::size_t k = 0; k < visit.size(); ++k) total[k] = unary_[visit[k]];
    std::vector<std::vector<int>> best_child(visit.size());  // per node: its best strategy per parent strategy
    for (std::size_t k = visit.size(); k-- > 1;) pass_up(tree, k, total, best_child[k]);
    // Keep the current strategies unless the tree gets strictly cheaper.
    const auto& rt = total[0];
    int arg = s_.x_[visit[0]];
    for (int s = 0; s < static_cast<int>(rt.size()); ++s) {
      if (strictly_below(rt[s], rt[arg])) arg = s;
    }
    if (rt[arg] == kInf) return {};
    std::vector<int> pick(visit.size());
    pick[0] = arg;
    for (std::size_t k = 1; k < visit.size(); ++k) pick[k] = best_child[k][pick[local_[tree_parent_[visit[k]]]]];
    // Same root strategy: only move when the subtree optimum beats the current one.
    if (arg == s_.x_[visit[0]]) {
      const double now = current_cost(tree);
      if (!strictly_below(rt[arg], now)) return {};
    }
    return pick;
  }

 private:
  // Unary terms: own cost, penalty, and edges to nodes outside the forest.
  void unary_terms(const std::vector<std::vector<double>>* penalty) {
    unary_.resize(n_);
    std::vector<int64_t> sum;  // per strategy: own cost plus the edges out of the forest, saturated
    for (int u = 0; u < n_; ++u) {
      if (!in_[u]) continue;
      s_.local_costs(u, sum, &in_);
      unary_[u].resize(sum.size());
      for (std::size_t s = 0; s < sum.size(); ++s) {
        unary_[u][s] = sum[s] >= kForbidden ? kInf : static_cast<double>(sum[s]) + (penalty ? (*penalty)[u][s] : 0.0);
      }
    }
  }

  // The edge's cost with the node on side `is_from` at `mine` and the other end at `other`.
  int64_t edge_cost(int edge, bool is_from, int mine, int other) const {
    const auto& e = s_.kernel_.edges[edge];
    const std::size_t cols = s_.kernel_.nodes[e.to].costs.size();
    return is_from ? e.costs[mine * cols + other] : e.costs[other * cols + mine];
  }

  // Adds child k's best subtree cost to its parent's totals, per parent strategy.
  void pass_up(const ForestTree& tree, std::size_t k, std::vector<std::vector<double>>& total,
               std::vector<int>& best_child) const {
    const int c = tree.visit[k];
    const int p = tree_parent_[c];
    const int sp = s_.kernel_.nodes[p].size(), sc = s_.kernel_.nodes[c].size();
    best_child.assign(sp, 0);
    auto& pt = total[local_[p]];
    for (int a = 0; a < sp; ++a) {
      double best = kInf;
      int arg = s_.x_[c];
      for (int b = 0; b < sc; ++b) {
        if (total[k][b] == kInf) continue;
        const int64_t v = edge_cost(parent_edge_[c], parent_is_from_[c], a, b);
        if (v >= kForbidden) continue;
        const double t = total[k][b] + static_cast<double>(v);
        if (t < best) best = t, arg = b;
      }
      best_child[a] = arg;
      pt[a] += best;
    }
  }

  // The tree's cost at the current strategies (unary terms plus tree edges).
  double current_cost(const ForestTree& tree) const {
    double now = 0;
    for (int u : tree.visit) now += unary_[u][s_.x_[u]];
    for (std::size_t k = 1; k < tree.visit.size(); ++k) {
      const int c = tree.visit[k];
      now += static_cast<double>(edge_cost(parent_edge_[c], parent_is_from_[c], s_.x_[tree_parent_[c]], s_.x_[c]));
    }
    return now;
  }

  const LocalSearch& s_;                    // the search whose assignment is re-optimized
  std::vector<int> in_;                     // per kernel node: whether it is in the forest
  int n_;                                   // kernel nodes
  std::vector<int> seen_;                   // per kernel node: already in a collected tree
  std::vector<int> tree_parent_;            // per kernel node: its parent in its tree (-1 = root)
  std::vector<int> parent_edge_;            // per kernel node: the kernel edge to its parent
  std::vector<char> parent_is_from_;        // per kernel node: whether the parent is that edge's `from`
  std::vector<int> local_;                  // per kernel node: its index in its tree's `visit` (-1 = not in a tree yet)
  std::vector<std::vector<double>> unary_;  // per forest node and strategy: its unary term
};

long LocalSearch::forest_move(std::mt19937_64& rng, const std::vector<std::vector<double>>* penalty) {
  Forest forest(*this, grow_forest(incidences_, rng), penalty);
  long moved = 0;
  for (int root = 0; root < static_cast<int>(kernel_.nodes.size()); ++root) {
    const ForestTree tree = forest.tree_at(root);
    if (tree.visit.empty()) continue;
    const std::vector<int> pick = forest.best_picks(tree);
    for (std::size_t k = 0; k < pick.size(); ++k) {
      if (pick[k] != x_[tree.visit[k]]) {
        move(tree.visit[k], pick[k], true);
        ++moved;
      }
    }
  }
  return moved;
}

}  // namespace shardsynth::synth
