#pragma once
// Moves on a folded problem's kernel with the usage limit kept exactly: the
// current assignment, its cost, and its usage profile (usage_profile.hpp).
// A move changes one node's strategy; its memory effect is a range update
// per usage piece, and it fits when no slot it raises passes the limit.
// Costs may be biased by a penalty per strategy (Lagrangian multipliers on
// the usage rows, priced per strategy), which guides moves without changing
// what the assignment costs.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "synth/solver/folding.hpp"
#include "synth/solver/usage_profile.hpp"

namespace shardsynth::synth {

// Whether priced cost `v` is below `ref` by a margin that floating point
// noise cannot fake; anything finite is below an infinite (forbidden) `ref`.
inline bool strictly_below(double v, double ref) {
  return std::isinf(ref) ? v < ref : v < ref - 1e-9 * (1.0 + std::abs(ref));
}

class LocalSearch {
 public:
  // Keeps a reference to `folded`, which must outlive this object.
  explicit LocalSearch(const FoldedProblem& folded);

  // Makes `x` (one kernel strategy per kernel node) the current assignment.
  void set(const Assignment& x);
  const Assignment& assignment() const { return x_; }
  // Kernel cost of the current assignment (kForbidden when it picks a forbidden choice).
  int64_t cost() const;
  // Whether the current assignment keeps the usage limit at every slot.
  bool feasible() const { return !limit_ || profile_.max() <= *limit_; }
  const UsageProfile& profile() const { return profile_; }
  const FoldedProblem& folded() const { return folded_; }
  const std::vector<std::vector<Incidence>>& incidences() const { return incidences_; }

  // Cost of node u taking strategy s with its neighbours as they are now
  // (kForbidden when a term is forbidden).
  int64_t local_cost(int u, int s) const;
  // local_cost(u, s) for every strategy s of u at once, into `out` (one
  // pass over u's edges: each table is read along a row or a column),
  // leaving out the edges to the nodes v with (*leave_out)[v] set.
  void local_costs(int u, std::vector<int64_t>& out, const std::vector<int>* leave_out = nullptr) const;
  // Applies the move; returns false and changes nothing when it would push
  // a slot it raises over the limit (never when `force`).
  bool move(int u, int s, bool force = false);

  // Descends: visits nodes in `order`, moving each to its cheapest strategy
  // given its neighbours (cost plus `penalty[u][s]` when given), until a
  // whole visit moves nothing or `max_visits` visits ran. With `keep_limit`,
  // only moves that fit are made. Returns the number of moves.
  long descend(const std::vector<int>& order, const std::vector<std::vector<double>>* penalty, bool keep_limit,
               int max_visits = 1 << 30);

  // Moves nodes live at slots over the limit to strategies that use less
  // there, cheapest first per byte freed (cost plus `penalty` when given),
  // until every slot fits. Returns whether it got there; gives up at
  // `deadline` when one is given.
  bool repair(const std::vector<std::vector<double>>* penalty, int max_moves,
              std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);

  // Re-optimizes jointly the nodes of a random induced forest of the kernel
  // graph (dynamic programming over each tree), the other nodes fixed, on
  // cost plus `penalty` when given. Never raises that priced cost; ignores
  // the limit. Returns the number of nodes that moved.
  long forest_move(std::mt19937_64& rng, const std::vector<std::vector<double>>* penalty);

  // The nodes with a piece covering `slot`, each once, ascending.
  std::vector<int> covering(int slot);

  // Per node and strategy, the usage summed over its pieces that cover `slot`.
  int64_t usage_at(int u, int s, int slot) const;

  // A compound move for the repair (repair_compound.cpp): u takes s, and
  // each neighbour whose entry against s is forbidden takes its strategy
  // allowed against s that uses least at `slot` (then costs least), when
  // that keeps the neighbour's other edges allowed. Fills `fixes` with the
  // neighbours' moves and returns the moves' cost change, or kForbidden
  // when some neighbour has no such strategy. `freed` gets the bytes the
  // moves free at `slot`.
  int64_t compound_move(int u, int s, int slot, std::vector<std::pair<int, int>>& fixes, int64_t& freed) const;

 private:
  class Forest;  // forest_move's trees and their dynamic programming (forest_move.cpp)

  const FoldedProblem& folded_;
  const Problem& kernel_;
  std::optional<int64_t> limit_;
  std::vector<std::vector<Incidence>> incidences_;
  Assignment x_;
  UsageProfile profile_;
  // Which nodes have a piece covering a slot: every piece's range split
  // into the canonical ranges of a segment tree over the slots, one list of
  // nodes per tree node (a stabbing query walks one leaf-to-root path).
  std::vector<std::vector<int>> cover_;
  std::vector<int> stamp_;  // per node: the last query that collected it
  std::vector<int64_t> scratch_;  // local_costs of the node being visited (descend, repair)
  std::vector<int64_t> freed_;    // per strategy of the node being priced: usage it frees at the repair's slot
  int query_ = 0;           // stamp of the current query
};

}  // namespace shardsynth::synth
