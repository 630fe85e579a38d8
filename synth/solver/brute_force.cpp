#include "synth/solver/brute_force.hpp"

#include <stdexcept>

namespace shardsynth::synth {

BruteForceResult brute_force(const Problem& problem, int64_t limit) {
  validate(problem);
  int64_t space = 1;
  for (const auto& node : problem.nodes) {
    if (space > limit / node.size()) throw std::invalid_argument("brute force: more than " + std::to_string(limit) + " assignments");
    space *= node.size();
  }
  BruteForceResult result;
  Assignment a(problem.nodes.size(), 0);
  while (true) {
    ++result.visited;
    const int64_t cost = evaluate(problem, a);
    if (cost < result.cost) {
      result.cost = cost;
      result.best = a;
    }
    std::size_t i = 0;
    while (i < a.size() && ++a[i] == problem.nodes[i].size()) a[i++] = 0;
    if (i == a.size()) break;
  }
  return result;
}

}  // namespace shardsynth::synth
