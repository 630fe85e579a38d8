#include "synth/solver/elimination_order.hpp"

#include <iterator>
#include <set>
#include <tuple>

namespace shardsynth::synth {

std::vector<int> elimination_order(const Problem& p) {
  const int n = static_cast<int>(p.nodes.size());
  std::vector<std::set<int>> adj(n);
  for (const auto& e : p.edges) {
    if (e.from == e.to) continue;
    adj[e.from].insert(e.to);
    adj[e.to].insert(e.from);
  }
  auto fill = [&](int v) {
    int missing = 0;
    for (auto a = adj[v].begin(); a != adj[v].end(); ++a) {
      for (auto b = std::next(a); b != adj[v].end(); ++b) missing += adj[*a].count(*b) ? 0 : 1;
    }
    return missing;
  };
  using Key = std::tuple<int, int, int>;  // fill, degree, node
  std::set<Key> queue;
  std::vector<Key> key(n);
  for (int v = 0; v < n; ++v) queue.insert(key[v] = {fill(v), static_cast<int>(adj[v].size()), v});
  std::vector<int> order;
  while (!queue.empty()) {
    const int v = std::get<2>(*queue.begin());
    queue.erase(queue.begin());
    order.push_back(v);
    const std::vector<int> nb(adj[v].begin(), adj[v].end());
    for (int a : nb) {
      adj[a].erase(v);
      for (int b : nb) {
        if (a != b) adj[a].insert(b);
      }
    }
    adj[v].clear();
    // Fill counts change around v's neighbours: refresh them and theirs.
    std::set<int> touched(nb.begin(), nb.end());
    for (int a : nb) touched.insert(adj[a].begin(), adj[a].end());
    for (int w : touched) {
      queue.erase(key[w]);
      queue.insert(key[w] = {fill(w), static_cast<int>(adj[w].size()), w});
    }
  }
  return order;
}

}  // namespace shardsynth::synth
