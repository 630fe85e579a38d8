#pragma once
// Cheap assignments for a Problem: a greedy sweep and a local search, both
// keeping within the usage limit when there is one. They give the
// counterexample loop its first incumbent; optimality is always proven by
// Z3 afterwards.
#include <vector>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

class PrimalHeuristic {
 public:
  // Keeps a reference to `problem`, which must outlive this object.
  explicit PrimalHeuristic(const Problem& problem);

  // Picks each node's strategy in `order`, minimizing its cost in `costs`
  // (a problem of the same shape, e.g. a reparameterization) plus its edges
  // to the nodes already picked. With a usage limit, a pick must leave room
  // for every later node's least usage, so the result keeps the limit
  // whenever the least usages do.
  Assignment greedy(const Problem& costs, const std::vector<int>& order) const;

  // Moves one node at a time to its cheapest strategy given its neighbours
  // (keeping within the usage limit), until no single move lowers the cost.
  // Returns the cost without the usage limit (kForbidden when the assignment
  // still picks a forbidden choice).
  int64_t local_search(Assignment& assignment) const;

 private:
  const Problem& problem_;
  std::vector<std::vector<Incidence>> incidences_;  // per node: its edges
  std::vector<std::vector<int>> rows_;              // usage rows (usage_rows) over node indices
  std::vector<std::vector<int>> node_rows_;         // per node: the usage rows it is in
};

}  // namespace shardsynth::synth
