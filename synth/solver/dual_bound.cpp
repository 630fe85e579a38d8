#include "synth/solver/dual_bound.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "synth/solver/primal_heuristic.hpp"

namespace shardsynth::synth {
namespace {

int64_t sub(int64_t x, int64_t m) { return x >= kForbidden ? kForbidden : x - m; }

// Entry (own strategy a, other strategy b) of an edge seen from one end.
struct Side {
  ProblemEdge* edge;
  int rows, cols;
  bool is_from;
  int64_t& at(int a, int b) const {
    return is_from ? edge->costs[static_cast<std::size_t>(a) * cols + b] : edge->costs[static_cast<std::size_t>(b) * cols + a];
  }
  int own_size() const { return is_from ? rows : cols; }
  int other_size() const { return is_from ? cols : rows; }
};

Side side(Problem& q, const Incidence& inc) {
  ProblemEdge& e = q.edges[inc.edge];
  return {&e, q.nodes[e.from].size(), q.nodes[e.to].size(), inc.is_from};
}

// Calls f on every cost table: node costs first, then edge tables.
template <class P, class F>
void for_each_table(P& p, F&& f) {
  for (auto& node : p.nodes) f(node.costs);
  for (auto& edge : p.edges) f(edge.costs);
}

int64_t finite_min(const std::vector<int64_t>& values) {
  int64_t m = kForbidden;
  for (int64_t v : values) m = std::min(m, v);
  return m;
}

// The bound the current tables prove: constant plus every table's minimum.
int64_t current_bound(const Problem& q, int64_t constant) {
  int64_t bound = constant;
  for (const auto& node : q.nodes) bound = cost_add(bound, finite_min(node.costs));
  for (const auto& edge : q.edges) bound = cost_add(bound, finite_min(edge.costs));
  return bound;
}

}  // namespace

DualBound reparameterize(const Problem& problem, const DualOptions& options) {
  DualBound d;
  d.problem = problem;
  Problem& q = d.problem;
  const int n = static_cast<int>(q.nodes.size());
  const auto inc = incidence_lists(q);
  // Forbidden entries become a finite penalty while messages pass (hard
  // constraints stall coordinate ascent); they are forbidden again at the end.
  int64_t largest = 1;
  for_each_table(q, [&](std::vector<int64_t>& t) {
    for (int64_t c : t) if (c < kForbidden) largest = std::max(largest, c);
  });
  const int64_t penalty = largest < kForbidden / 8 ? 4 * largest : kForbidden;
  for_each_table(q, [&](std::vector<int64_t>& t) {
    for (auto& c : t) if (c >= kForbidden) c = penalty;
  });
  int64_t constant = 0;
  int64_t best_bound = -1;
  int stalled = 0;
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<int> position(n);
  std::optional<PrimalHeuristic> heuristic;
  if (options.decode) heuristic.emplace(problem);
  // Decodes an assignment from the current tables and polishes it; keeps it
  // when it is the best feasible one so far. The greedy runs against the
  // direction of the sweep just done: that sweep's last node has collected
  // every message, and each node before it sent its share towards the
  // nodes that the greedy has already picked.
  auto decode = [&](bool after_forward_sweep) {
    std::vector<int> sweep(order);
    if (after_forward_sweep) std::reverse(sweep.begin(), sweep.end());
    Assignment x = heuristic->greedy(q, sweep);
    const int64_t cost = heuristic->local_search(x);
    if (cost < d.primal_cost && within_usage_limit(problem, x)) {
      d.primal_cost = cost;
      d.primal = std::move(x);
    }
  };
  bool decoded = true;  // whether the last sweep's tables were decoded
  for (int pass = 0; pass < options.max_passes; ++pass) {
    if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) break;
    const bool forward = pass % 2 == 0;
    for (int k = 0; k < n; ++k) {
      const int u = forward ? k : n - 1 - k;
      position[u] = k;
    }
    for (int k = 0; k < n; ++k) {
      const int u = forward ? k : n - 1 - k;
      auto& theta = q.nodes[u].costs;
      const int size = static_cast<int>(theta.size());
      // Collect every incident edge's min-marginal into the node.
      for (const auto& i : inc[u]) {
        const Side s = side(q, i);
        for (int a = 0; a < size; ++a) {
          int64_t m = kForbidden;
          for (int b = 0; b < s.other_size(); ++b) m = std::min(m, s.at(a, b));
          if (m >= kForbidden) {
            theta[a] = kForbidden;
            continue;
          }
          if (m == 0) continue;
          for (int b = 0; b < s.other_size(); ++b) s.at(a, b) = sub(s.at(a, b), m);
          theta[a] = cost_add(theta[a], m);
        }
      }
      const int64_t low = finite_min(theta);
      if (low >= kForbidden) {  // no strategy of u is allowed: nothing is feasible
        d.constant = kForbidden;
        return d;
      }
      constant += low;
      for (auto& t : theta) t = sub(t, low);
      // Send a share of the node's cost along each edge to a node later in
      // this sweep (TRW-S: the share is 1 / the larger of the node's
      // earlier and later neighbour counts).
      int later = 0;
      for (const auto& i : inc[u]) later += position[i.other] > k ? 1 : 0;
      const int earlier = static_cast<int>(inc[u].size()) - later;
      const int64_t share = std::max({later, earlier, 1});
      if (later == 0) continue;
      std::vector<int64_t> delta(size);
      for (int a = 0; a < size; ++a) delta[a] = theta[a] >= kForbidden ? 0 : theta[a] / share;
      for (const auto& i : inc[u]) {
        if (position[i.other] <= k) continue;
        const Side s = side(q, i);
        for (int a = 0; a < size; ++a) {
          if (delta[a] == 0) continue;
          for (int b = 0; b < s.other_size(); ++b) s.at(a, b) = cost_add(s.at(a, b), delta[a]);
          theta[a] -= delta[a];
        }
      }
    }
    ++d.passes;
    decoded = options.decode && (pass < options.decode_first || (pass + 1) % options.decode_every == 0);
    if (decoded) decode(forward);
    const int64_t bound = current_bound(q, constant);
    if (bound > best_bound) {
      best_bound = bound;
      stalled = 0;
    } else if (++stalled >= options.stall_passes) {
      break;
    }
    if (d.primal_cost <= bound) break;  // the decoded assignment is already optimal
  }
  if (options.decode && !decoded) decode(d.passes % 2 == 1);  // after the last sweep (forward sweeps are the odd-numbered ones)
  // Forbidden entries are forbidden again; every table is left with minimum
  // 0, the minima in the constant.
  std::vector<const std::vector<int64_t>*> originals;
  for_each_table(problem, [&](const std::vector<int64_t>& t) { originals.push_back(&t); });
  std::size_t k = 0;
  bool infeasible = false;
  for_each_table(q, [&](std::vector<int64_t>& t) {
    const auto& original = *originals[k++];
    for (std::size_t s = 0; s < t.size(); ++s) if (original[s] >= kForbidden) t[s] = kForbidden;
    const int64_t m = finite_min(t);
    if (m >= kForbidden) {
      infeasible = true;
      return;
    }
    constant += m;
    for (auto& c : t) c = sub(c, m);
  });
  if (infeasible) {
    d.constant = kForbidden;
    return d;
  }
  d.constant = constant;
  return d;
}

Problem prune_at_gap(const Problem& reparameterized, int64_t gap, int64_t* pruned) {
  Problem q = reparameterized;
  const auto inc = incidence_lists(q);
  int64_t count = 0;
  auto forbid = [&](int64_t& c) {
    if (c < kForbidden) {
      c = kForbidden;
      ++count;
    }
  };
  for (auto& node : q.nodes) {
    for (auto& c : node.costs) {
      if (c >= gap) forbid(c);
    }
  }
  for (bool changed = true; changed;) {
    const int64_t before = count;
    for (auto& edge : q.edges) {
      const auto& from = q.nodes[edge.from].costs;
      const auto& to = q.nodes[edge.to].costs;
      for (std::size_t a = 0; a < from.size(); ++a) {
        for (std::size_t b = 0; b < to.size(); ++b) {
          int64_t& c = edge.costs[a * to.size() + b];
          if (cost_add(cost_add(c, from[a]), to[b]) >= gap) forbid(c);
        }
      }
    }
    for (std::size_t u = 0; u < q.nodes.size(); ++u) {
      auto& theta = q.nodes[u].costs;
      for (int a = 0; a < static_cast<int>(theta.size()); ++a) {
        int64_t low = theta[a];
        for (const auto& i : inc[u]) {
          const Side s = side(q, i);
          int64_t m = kForbidden;
          for (int b = 0; b < s.other_size(); ++b) m = std::min(m, s.at(a, b));
          low = cost_add(low, m);
        }
        if (low >= gap) forbid(theta[a]);
      }
    }
    changed = count != before;
  }
  if (pruned) *pruned = count;
  return q;
}

}  // namespace shardsynth::synth
