#include "synth/liveness.hpp"

#include <algorithm>

namespace shardsynth::synth {

std::vector<Interval> activation_intervals(const ir::Graph& graph, const std::vector<ir::Vertex>& order,
                                           const StepClock& clock) {
  std::vector<int64_t> position(graph.size(), 0);
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int64_t>(i);
  std::vector<Interval> out(graph.size());
  for (ir::Vertex v : order) {
    const int64_t at = clock.forward(position[v]);
    if (clock.mode == costs::Mode::training) {
      out[v] = {at, clock.backward(position[v]) + 1};
      continue;
    }
    int64_t last = at;
    for (const auto& [user, operand] : graph.users_of(v)) last = std::max(last, clock.forward(position[user]));
    out[v] = {at, last + 1};
  }
  return out;
}

Interval span(const Interval& a, const Interval& b) {
  if (a.from >= a.to) return b;
  return {std::min(a.from, b.from), std::max(a.to, b.to)};
}

}  // namespace shardsynth::synth
