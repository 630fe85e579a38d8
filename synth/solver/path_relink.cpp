#include "synth/solver/path_relink.hpp"

#include "synth/solver/usage_profile.hpp"

namespace shardsynth::synth {
namespace {

// The best cut k for mixes x = `head` on nodes below k, `tail` from k on:
// walks k up from 0 (all `tail`), switching one node at a time and keeping
// the cost and the usage profile as it goes. Returns the cut, -1 when none
// keeps the limit; `cost` is its cost.
int best_cut(const FoldedProblem& folded, const std::vector<std::vector<Incidence>>& incidence, const Assignment& head,
             const Assignment& tail, int64_t& cost) {
  const Problem& kernel = folded.kernel;
  const int n = static_cast<int>(kernel.nodes.size());
  Assignment x = tail;
  UsageProfile profile(usage_profile_of(folded, x));
  const int64_t limit = folded.usage_limit.value_or(INT64_MAX);
  int64_t now = cost_without_usage(kernel, x);
  int best = -1;
  cost = kForbidden;
  auto consider = [&](int k) {
    if (now < cost && profile.max() <= limit) {
      cost = now;
      best = k;
    }
  };
  consider(0);
  for (int u = 0; u < n; ++u) {
    if (head[u] != x[u]) {
      int64_t before = kernel.nodes[u].costs[x[u]];
      for (const auto& i : incidence[u]) before = cost_add(before, edge_cost(kernel, kernel.edges[i.edge], x));
      for (const auto& p : folded.pieces[u]) profile.add(p.from, p.to, p.usages[head[u]] - p.usages[x[u]]);
      x[u] = head[u];
      int64_t after = kernel.nodes[u].costs[x[u]];
      for (const auto& i : incidence[u]) after = cost_add(after, edge_cost(kernel, kernel.edges[i.edge], x));
      // Forbidden parts make the running sum unusable: recount it then.
      now = (before >= kForbidden || after >= kForbidden || now >= kForbidden) ? cost_without_usage(kernel, x)
                                                                                : now - before + after;
    }
    consider(u + 1);
  }
  return best;
}

Assignment mix(const Assignment& head, const Assignment& tail, int cut) {
  Assignment x = tail;
  for (int u = 0; u < cut; ++u) x[u] = head[u];
  return x;
}

}  // namespace

Assignment relink(const FoldedProblem& folded, const Assignment& a, const Assignment& b) {
  const std::size_t n = folded.kernel.nodes.size();
  if (a.size() != n || b.size() != n) return {};
  const auto incidence = incidence_lists(folded.kernel);
  int64_t cost_ab = kForbidden;
  int64_t cost_ba = kForbidden;
  const int cut_ab = best_cut(folded, incidence, a, b, cost_ab);
  const int cut_ba = best_cut(folded, incidence, b, a, cost_ba);
  if (cut_ab < 0 && cut_ba < 0) return {};
  return cost_ab <= cost_ba ? mix(a, b, cut_ab) : mix(b, a, cut_ba);
}

}  // namespace shardsynth::synth
