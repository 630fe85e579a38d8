// LocalSearch::compound_move: the repair's move of a node together with the
// neighbours that a forbidden pair ties to it (local_search.hpp).
#include <algorithm>

#include "synth/solver/local_search.hpp"

namespace shardsynth::synth {
namespace {

// The entry of edge `inc` (seen from its node) when the node takes s and the other end t.
int64_t entry(const Problem& kernel, const Incidence& inc, int s, int t) {
  const auto& e = kernel.edges[inc.edge];
  const std::size_t cols = kernel.nodes[e.to].costs.size();
  return inc.is_from ? e.costs[s * cols + t] : e.costs[t * cols + s];
}

}  // namespace

int64_t LocalSearch::compound_move(int u, int s, int slot, std::vector<std::pair<int, int>>& fixes,
                                   int64_t& freed) const {
  fixes.clear();
  int64_t delta = kernel_.nodes[u].costs[s];
  if (delta >= kForbidden) return kForbidden;
  delta -= kernel_.nodes[u].costs[x_[u]];
  freed = usage_at(u, x_[u], slot) - usage_at(u, s, slot);
  for (const auto& inc : incidences_[u]) {
    const int w = inc.other;
    const int64_t old_entry = entry(kernel_, inc, x_[u], x_[w]);
    if (entry(kernel_, inc, s, x_[w]) < kForbidden) {
      delta += entry(kernel_, inc, s, x_[w]) - old_entry;
      continue;
    }
    if (w == u || std::any_of(fixes.begin(), fixes.end(), [&](const auto& f) { return f.first == w; })) {
      return kForbidden;  // a loop or a parallel edge: left to the single moves
    }
    // w's best strategy allowed against s: least usage at the slot, then least cost.
    int best = -1;
    int64_t best_use = 0, best_cost = 0;
    for (int t = 0; t < kernel_.nodes[w].size(); ++t) {
      const int64_t with_u = entry(kernel_, inc, s, t);
      if (with_u >= kForbidden) continue;
      int64_t c = kernel_.nodes[w].costs[t];
      for (const auto& other : incidences_[w]) {
        if (other.edge == inc.edge || c >= kForbidden) continue;
        c = cost_add(c, entry(kernel_, other, t, x_[other.other]));
      }
      if (c >= kForbidden) continue;
      const int64_t use = usage_at(w, t, slot);
      if (best < 0 || use < best_use || (use == best_use && c < best_cost)) best = t, best_use = use, best_cost = c;
    }
    if (best < 0) return kForbidden;
    const int64_t now = local_cost(w, x_[w]);
    if (now >= kForbidden) return kForbidden;
    delta += best_cost + entry(kernel_, inc, s, best) - now;
    freed += usage_at(w, x_[w], slot) - best_use;
    fixes.emplace_back(w, best);
  }
  return delta;
}

}  // namespace shardsynth::synth
