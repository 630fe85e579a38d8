#include "synth/solver/reduction.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace shardsynth::synth {
namespace {

int64_t add(int64_t a, int64_t b) { return (a >= kForbidden || b >= kForbidden) ? kForbidden : std::min(a + b, kForbidden); }

// Working state: alive nodes with their surviving original strategies, and
// one merged edge per node pair (lo < hi), tables indexed [lo strategy][hi strategy].
class Reducer {
 public:
  explicit Reducer(const Problem& p)
      : original_(p), alive_(p.nodes.size(), true), adjacent_(p.nodes.size()), node_rows_(p.nodes.size()) {
    if (p.usage_limit) {
      rows_ = usage_rows(p);
      for (std::size_t r = 0; r < rows_.size(); ++r) {
        for (int u : rows_[r]) node_rows_[u].push_back(static_cast<int>(r));
      }
    }
    for (const auto& node : p.nodes) {
      Work w;
      for (int s = 0; s < node.size(); ++s) {
        w.strategies.push_back(s);
        w.costs.push_back(node.costs[s]);
        w.usages.push_back(node.usages.empty() ? 0 : node.usages[s]);
      }
      nodes_.push_back(std::move(w));
    }
    for (const auto& e : p.edges) {
      const int rows = p.nodes[e.from].size(), cols = p.nodes[e.to].size();
      Table t(rows, std::vector<int64_t>(cols));
      for (int a = 0; a < rows; ++a) {
        for (int b = 0; b < cols; ++b) t[a][b] = e.costs[static_cast<std::size_t>(a) * cols + b];
      }
      add_edge(e.from, e.to, t);
    }
  }

  Reduced run() {
    drop_strategies();
    if (!original_.usage_limit) {
      for (bool changed = true; changed;) {
        changed = false;
        for (int u = 0; u < static_cast<int>(nodes_.size()); ++u) {
          if (!alive_[u]) continue;
          const auto nbrs = neighbours(u);
          if (nodes_[u].strategies.size() == 1 || nbrs.size() <= 2) {
            eliminate(u, nbrs);
            changed = true;
            continue;
          }
          for (int v : nbrs) {
            if (follows(v, u)) {
              merge(v, u);
              changed = true;
              break;
            }
          }
        }
        if (changed) drop_strategies();
      }
    }
    return build();
  }

 private:
  using Table = std::vector<std::vector<int64_t>>;
  struct Work {
    std::vector<int> strategies;  // surviving original strategy indices
    std::vector<int64_t> costs;   // their costs
    std::vector<int64_t> usages;  // their usages
  };

  static Table transpose(const Table& t) {
    if (t.empty()) return t;
    Table out(t[0].size(), std::vector<int64_t>(t.size()));
    for (std::size_t a = 0; a < t.size(); ++a) {
      for (std::size_t b = 0; b < t[a].size(); ++b) out[b][a] = t[a][b];
    }
    return out;
  }

  void add_edge(int u, int v, Table t) {
    if (u == v) throw std::invalid_argument("reduce: self edge on node " + std::to_string(u));
    if (u > v) {
      std::swap(u, v);
      t = transpose(t);
    }
    auto [it, fresh] = edges_.try_emplace({u, v}, std::move(t));
    if (fresh) {
      adjacent_[u].insert(v);
      adjacent_[v].insert(u);
      return;
    }
    for (std::size_t a = 0; a < it->second.size(); ++a) {
      for (std::size_t b = 0; b < it->second[a].size(); ++b) it->second[a][b] = add(it->second[a][b], t[a][b]);
    }
  }

  // Table of edge (u, v) oriented [u strategy][v strategy].
  Table table(int u, int v) const { return u < v ? edges_.at({u, v}) : transpose(edges_.at({v, u})); }

  void erase_edge(int u, int v) {
    edges_.erase({std::min(u, v), std::max(u, v)});
    adjacent_[u].erase(v);
    adjacent_[v].erase(u);
  }

  std::vector<int> neighbours(int u) const { return {adjacent_[u].begin(), adjacent_[u].end()}; }

  // Removes strategies of u not in `keep` (positions), from costs and incident tables.
  void keep_strategies(int u, const std::vector<bool>& keep) {
    Work& w = nodes_[u];
    Work kept;
    for (std::size_t s = 0; s < keep.size(); ++s) {
      if (!keep[s]) continue;
      kept.strategies.push_back(w.strategies[s]);
      kept.costs.push_back(w.costs[s]);
      kept.usages.push_back(w.usages[s]);
    }
    for (int v : adjacent_[u]) {
      Table& t = edges_.at({std::min(u, v), std::max(u, v)});
      if (u < v) {
        Table nt;
        for (std::size_t s = 0; s < keep.size(); ++s) {
          if (keep[s]) nt.push_back(t[s]);
        }
        t = std::move(nt);
      } else {
        for (auto& row : t) {
          std::vector<int64_t> nr;
          for (std::size_t s = 0; s < keep.size(); ++s) {
            if (keep[s]) nr.push_back(row[s]);
          }
          row = std::move(nr);
        }
      }
    }
    w = std::move(kept);
  }

  // Per usage row: the least usage its nodes can have together.
  std::vector<int64_t> row_floors() const {
    std::vector<int64_t> floors;
    for (const auto& row : rows_) {
      int64_t sum = 0;
      for (int u : row) sum += *std::min_element(nodes_[u].usages.begin(), nodes_[u].usages.end());
      floors.push_back(sum);
    }
    return floors;
  }

  void drop_strategies() {
    for (bool changed = true; changed;) {
      changed = false;
      const std::vector<int64_t> floors = row_floors();
      for (int u = 0; u < static_cast<int>(nodes_.size()); ++u) {
        if (!alive_[u]) continue;
        const auto nbrs = neighbours(u);
        std::vector<Table> tables;
        for (int v : nbrs) tables.push_back(table(u, v));
        const std::size_t n = nodes_[u].strategies.size();
        std::vector<bool> keep(n, true);
        const int64_t own_floor = nodes_[u].usages.empty() ? 0 : *std::min_element(nodes_[u].usages.begin(), nodes_[u].usages.end());
        auto forbidden = [&](std::size_t s) {
          if (nodes_[u].costs[s] >= kForbidden) return true;
          // Over the usage limit even with every other live node at its least usage.
          for (int r : node_rows_[u]) {
            if (floors[r] - own_floor + nodes_[u].usages[s] > *original_.usage_limit) return true;
          }
          for (const auto& t : tables) {
            if (std::all_of(t[s].begin(), t[s].end(), [](int64_t c) { return c >= kForbidden; })) return true;
          }
          return false;
        };
        // j dominates i (Goldstein's dead-end elimination): switching any
        // assignment from i to j never costs more, whatever the neighbours
        // pick, and never needs more memory. Ties keep the lower index.
        auto dominates = [&](std::size_t j, std::size_t i) {
          const Work& w = nodes_[u];
          if (original_.usage_limit && w.usages[j] > w.usages[i]) return false;
          if (w.costs[j] >= kForbidden) return false;
          int64_t margin = w.costs[i] >= kForbidden ? kForbidden : w.costs[i] - w.costs[j];
          for (const auto& t : tables) {
            int64_t worst = kForbidden;  // min over neighbour strategies of cost(i, b) - cost(j, b)
            for (std::size_t b = 0; b < t[i].size(); ++b) {
              if (t[j][b] >= kForbidden) {
                if (t[i][b] < kForbidden) return false;  // i allows b where j does not
                continue;
              }
              worst = std::min(worst, t[i][b] >= kForbidden ? kForbidden : t[i][b] - t[j][b]);
            }
            if (worst >= kForbidden) continue;
            margin = margin >= kForbidden ? kForbidden : margin + worst;
            if (margin < -kForbidden) return false;
          }
          return margin >= 0;
        };
        for (std::size_t i = 0; i < n; ++i) keep[i] = !forbidden(i);
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n && keep[i]; ++j) {
            if (j == i || !keep[j] || !dominates(j, i)) continue;
            if (!dominates(i, j) || j < i) keep[i] = false;
          }
        }
        const auto kept = static_cast<std::size_t>(std::count(keep.begin(), keep.end(), true));
        if (kept == n || kept == 0) continue;  // nothing to drop, or infeasible: leave it to the solver
        dropped_ += static_cast<int>(n - kept);
        keep_strategies(u, keep);
        changed = true;
      }
    }
  }

  // Whether v's strategy is a function of u's: every row of the (u, v)
  // table allows exactly one strategy of v (XLA's "following").
  bool follows(int v, int u) const {
    const Table t = table(u, v);
    for (const auto& row : t) {
      if (std::count_if(row.begin(), row.end(), [](int64_t c) { return c < kForbidden; }) != 1) return false;
    }
    return true;
  }

  // Folds v, which follows u, into u: u's cost gains v's cost and the edge
  // entry at v's forced strategy, and v's other edges become u's.
  void merge(int v, int u) {
    const Table t = table(u, v);
    std::vector<std::size_t> f(t.size());
    for (std::size_t a = 0; a < t.size(); ++a) {
      f[a] = static_cast<std::size_t>(std::find_if(t[a].begin(), t[a].end(), [](int64_t c) { return c < kForbidden; }) - t[a].begin());
      nodes_[u].costs[a] = add(nodes_[u].costs[a], add(t[a][f[a]], nodes_[v].costs[f[a]]));
      choices_[v][nodes_[u].strategies[a]] = nodes_[v].strategies[f[a]];
    }
    erase_edge(u, v);
    for (int x : neighbours(v)) {
      const Table tx = table(v, x);
      Table moved(t.size());
      for (std::size_t a = 0; a < t.size(); ++a) moved[a] = tx[f[a]];
      erase_edge(v, x);
      add_edge(u, x, moved);
    }
    alive_[v] = false;
    order_.push_back(Elimination{v, {u}, {}, {}});
  }

  void eliminate(int u, const std::vector<int>& nbrs) {
    const Work& w = nodes_[u];
    const std::size_t n = w.strategies.size();
    Elimination record{u, {}, {}, {}};
    if (n == 1 || nbrs.empty()) {
      // Fold: neighbours' costs gain this node's fixed edge row; or pick the cheapest alone.
      std::size_t best = 0;
      for (std::size_t s = 1; s < n; ++s) {
        if (w.costs[s] < w.costs[best]) best = s;
      }
      constant_ = add(constant_, w.costs[best]);
      for (int v : nbrs) {
        const Table t = table(u, v);
        for (std::size_t b = 0; b < nodes_[v].costs.size(); ++b) nodes_[v].costs[b] = add(nodes_[v].costs[b], t[best][b]);
      }
      record.choice = {w.strategies[best]};
    } else if (nbrs.size() == 1) {
      const int v = nbrs[0];
      const Table t = table(u, v);
      record.neighbours = {v};
      for (std::size_t b = 0; b < nodes_[v].costs.size(); ++b) {
        std::size_t best = 0;
        int64_t best_cost = kForbidden;
        for (std::size_t a = 0; a < n; ++a) {
          const int64_t c = add(w.costs[a], t[a][b]);
          if (c < best_cost) best_cost = c, best = a;
        }
        nodes_[v].costs[b] = add(nodes_[v].costs[b], best_cost);
        choices_[u][nodes_[v].strategies[b]] = w.strategies[best];
      }
    } else {
      const int v = nbrs[0], x = nbrs[1];
      const Table tv = table(u, v), tx = table(u, x);
      record.neighbours = {v, x};
      Table product(nodes_[v].costs.size(), std::vector<int64_t>(nodes_[x].costs.size()));
      for (std::size_t b = 0; b < product.size(); ++b) {
        for (std::size_t c = 0; c < product[b].size(); ++c) {
          std::size_t best = 0;
          int64_t best_cost = kForbidden;
          for (std::size_t a = 0; a < n; ++a) {
            const int64_t cost = add(add(w.costs[a], tv[a][b]), tx[a][c]);
            if (cost < best_cost) best_cost = cost, best = a;
          }
          product[b][c] = best_cost;
          pair_choices_[u][{nodes_[v].strategies[b], nodes_[x].strategies[c]}] = w.strategies[best];
        }
      }
      add_edge(v, x, product);
    }
    for (int v : nbrs) erase_edge(u, v);
    alive_[u] = false;
    order_.push_back(std::move(record));
  }

  Reduced build() {
    Reduced r;
    r.kernel.name = original_.name;
    r.kernel.usage_limit = original_.usage_limit;
    r.kernel_of.assign(nodes_.size(), -1);
    for (int u = 0; u < static_cast<int>(nodes_.size()); ++u) {
      if (!alive_[u]) continue;
      r.kernel_of[u] = static_cast<int>(r.kernel.nodes.size());
      const auto& src = original_.nodes[u];
      r.kernel.nodes.push_back({src.label, nodes_[u].costs, nodes_[u].usages, src.live_from, src.live_to});
      r.strategy_of.push_back(nodes_[u].strategies);
    }
    for (const auto& [key, t] : edges_) {
      ProblemEdge e{r.kernel_of[key.first], r.kernel_of[key.second], {}};
      for (const auto& row : t) e.costs.insert(e.costs.end(), row.begin(), row.end());
      r.kernel.edges.push_back(std::move(e));
    }
    for (auto& record : order_) {
      // Tables of choices over the neighbours' original strategies.
      std::vector<int> sizes;
      for (int v : record.neighbours) sizes.push_back(original_.nodes[v].size());
      if (record.neighbours.size() == 1) {
        record.choice.assign(sizes[0], -1);
        for (const auto& [b, a] : choices_[record.node]) record.choice[b] = a;
      } else if (record.neighbours.size() == 2) {
        record.choice.assign(static_cast<std::size_t>(sizes[0]) * sizes[1], -1);
        for (const auto& [bc, a] : pair_choices_[record.node]) record.choice[static_cast<std::size_t>(bc.first) * sizes[1] + bc.second] = a;
      }
      record.neighbour_sizes = std::move(sizes);
      r.eliminated.push_back(std::move(record));
    }
    r.constant = constant_;
    r.dropped_strategies = dropped_;
    return r;
  }

  const Problem& original_;
  std::vector<Work> nodes_;
  std::vector<bool> alive_;
  std::map<std::pair<int, int>, Table> edges_;
  std::vector<std::set<int>> adjacent_;      // per node: the nodes it shares an edge with (keys of edges_)
  std::vector<std::vector<int>> rows_;       // usage rows (usage_rows) over node indices
  std::vector<std::vector<int>> node_rows_;  // per node: the usage rows it is in
  std::vector<Elimination> order_;
  std::map<int, std::map<int, int>> choices_;                        // leaf: neighbour strategy -> own
  std::map<int, std::map<std::pair<int, int>, int>> pair_choices_;   // degree 2: neighbours' strategies -> own
  int64_t constant_ = 0;
  int dropped_ = 0;
};

}  // namespace

Reduced reduce(const Problem& problem) {
  validate(problem);
  return Reducer(problem).run();
}

Reduced identity_reduction(const Problem& problem) {
  Reduced r;
  r.kernel = problem;
  for (std::size_t i = 0; i < problem.nodes.size(); ++i) {
    r.kernel_of.push_back(static_cast<int>(i));
    std::vector<int> strategies(problem.nodes[i].size());
    for (int s = 0; s < problem.nodes[i].size(); ++s) strategies[s] = s;
    r.strategy_of.push_back(std::move(strategies));
  }
  return r;
}

Assignment expand(const Reduced& r, const Assignment& kernel_assignment) {
  Assignment a(r.kernel_of.size(), -1);
  for (std::size_t u = 0; u < r.kernel_of.size(); ++u) {
    if (r.kernel_of[u] >= 0) a[u] = r.strategy_of[r.kernel_of[u]].at(kernel_assignment.at(r.kernel_of[u]));
  }
  for (auto it = r.eliminated.rbegin(); it != r.eliminated.rend(); ++it) {
    std::size_t index = 0;
    for (std::size_t k = 0; k < it->neighbours.size(); ++k) index = index * it->neighbour_sizes[k] + a[it->neighbours[k]];
    const int choice = it->choice.at(index);
    if (choice < 0) throw std::logic_error("expand: no recorded choice for node " + std::to_string(it->node));
    a[it->node] = choice;
  }
  return a;
}

}  // namespace shardsynth::synth
