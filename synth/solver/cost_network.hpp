#pragma once
// A kernel Problem as a weighted constraint network whose lower bound rises
// under branching: soft and directional arc consistency with memory rows,
// restored on backtracking from a trail. The exact search on it is network_search.hpp.
//
// Every value (a node's strategy) has a unary cost, every edge a table
// whose current cost for a pair is its original cost minus what was moved
// onto its two ends (per value, `delta`). The invariant, for every plan x
// within the usage limit:
//   cost(x) = floor + sum of unary(x_i) + sum of edge residuals(x) + rows' slack terms(x),
// each term at least zero, so `floor` is a lower bound on every plan of
// the current subproblem. Propagation moves cost toward `floor`:
//  - arc consistency: each value's cheapest pair on an edge (over the
//    other end's live values) moves onto the value; a value without a pair
//    left dies;
//  - node consistency: each variable's cheapest value moves into `floor`
//    (again whenever it loses values), and a value whose unary cost lifts
//    `floor` to the cutoff dies;
//  - directional arc consistency: on each edge, the end of lower index
//    gets full supports: each of its values receives its cheapest pair
//    counting the other end's unary cost, after the unary costs that needs
//    are extended from the other end into the edge (a residual may then
//    be negative for a dead value, never for live ones). One pass from the
//    last variable to the first carries costs toward the first variable
//    and into `floor` (on a tree, all the way to the optimum);
//  - knapsack rows (knapsack_rows.hpp: members whose weights must fit a
//    capacity): a value too heavy for the room the other members' lightest
//    values leave dies; and each row marked priced carries a multiplier
//    q/den (row_penalties.hpp) whose penalty its members' values hold,
//    with penalty(q, capacity) taken out of `floor` (valid, because for a
//    plan that fits, the weights sum to at most the capacity). A
//    Lagrangian step moves q up when the members' cheapest values overflow
//    the row, down (to 0 at most) when they leave room, to where that
//    changes, and keeps the move when it lifts `floor`: so the multiplier
//    follows the subproblem, and a row that no longer binds gives back
//    what its penalty took.
// Every change goes through the trail (a pointer and its old value), so
// `restore(mark)` brings the network back exactly. Past its deadline
// propagation stops between two moves (each move keeps the invariant, so
// `floor` stays a bound) and reports success; `interrupted()` then says
// that the fixed point was not reached, and the search must stop.
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/problem.hpp"
#include "synth/solver/row_penalties.hpp"

namespace shardsynth::synth {

class CostNetwork {
 public:
  // `network`'s node costs and edge tables (entries at least 0; its usages
  // and limit are not read) with `rows` as the memory limit; `cutoff` is
  // the cost a plan must stay below (values that cannot are dropped).
  // `multipliers` (one per row, or none for all 0) are those whose penalties
  // `network`'s node costs hold already (penalize_rows).
  CostNetwork(const Problem& network, std::vector<KnapsackRow> rows, RowMultipliers multipliers, int64_t cutoff);

  int variables() const { return static_cast<int>(first_.size()); }
  int domain_size(int var) const { return size_[var]; }
  int live_count(int var) const { return static_cast<int>(live_count_[var]); }
  bool live(int var, int value) const { return live_[first_[var] + value] != 0; }
  int64_t unary(int var, int value) const { return unary_[first_[var] + value]; }
  // The live value of least unary cost (the lowest such index), -1 when none is live.
  int cheapest(int var) const;
  // The least weight among the live values of the row's member.
  int64_t lightest_weight(int row, std::size_t member) const;
  int64_t floor() const { return floor_; }  // the lower bound: no plan of this subproblem costs less
  int64_t cutoff() const { return cutoff_; }
  // Lowers the cutoff (a cheaper plan was found); values are dropped at the
  // next propagation. Not undone by restore.
  void lower_cutoff(int64_t cutoff) { cutoff_ = cutoff; }
  // Marks the rows whose Lagrangian steps run (indices into rows()).
  void price_rows(const std::vector<int>& rows);
  const std::vector<KnapsackRow>& rows() const { return rows_; }
  int64_t multiplier(int row) const { return multiplier_[row]; }  // the row's multiplier's numerator

  int edge_count() const { return static_cast<int>(edges_.size()); }
  int edge_from(int edge) const { return edges_[edge].a; }  // the variable whose value picks the table's row
  int edge_to(int edge) const { return edges_[edge].b; }    // the variable whose value picks the column
  // The edge's current cost for a pair (kForbidden = forbidden).
  int64_t residual(int edge, int from_value, int to_value) const { return pair_cost(edges_[edge], from_value, to_value); }

  // Trail position to come back to.
  std::size_t mark() const { return trail_.size(); }
  void restore(std::size_t mark);

  // Changes followed by propagation to a fixed point; false when a
  // variable has no value left or the floor reaches the cutoff (the
  // subproblem holds no plan below it).
  bool assign(int var, int value);
  bool remove(int var, int value);
  bool propagate();
  // Propagation stops short at `deadline` (or on an interrupt request): see interrupted().
  void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) { deadline_ = deadline; }
  // A propagation stopped short (deadline or interrupt): its floor is a bound, but no fixed point.
  bool interrupted() const { return interrupted_; }

  long work() const { return work_; }  // values scanned so far (revisions, normalizing, pruning, rows): a deterministic measure of time

  // A multiplier as an exact fraction: cost per byte.
  struct Multiplier {
    int64_t num = 0;  // cost
    int64_t den = 1;  // bytes (> 0)
  };

 private:
  struct Edge {
    int a = 0;                  // variable whose value picks the table's row
    int b = 0;                  // variable whose value picks the column
    std::size_t table = 0;      // offset of row-major costs in tables_
    std::size_t delta_a = 0;    // offset of a's per-value moved costs in deltas_
    std::size_t delta_b = 0;    // offset of b's per-value moved costs in deltas_
  };
  struct Arc {
    int edge = 0;       // index into edges_
    bool is_a = false;  // this variable is the edge's `a`
  };

  void set(int64_t& slot, int64_t value);
  int64_t pair_cost(const Edge& e, int va, int vb) const;
  bool kill(int var, int value);
  bool revise(int var, const Arc& arc);
  bool normalize(int var);
  bool shift_to_floor(int var);
  bool prune(int var);
  bool prune_all();
  bool fit_rows();
  bool fit_row(int row);
  std::optional<Multiplier> turning_point(int row, int direction) const;
  bool price_row(int row, bool* moved);
  bool drain();
  bool full_support(int edge);
  bool direct_costs();
  bool due();

  std::vector<std::size_t> first_;  // per variable: offset of its values in the flat arrays
  std::vector<int> size_;           // per variable: strategy count
  std::vector<int64_t> unary_;      // per value: current unary cost
  std::vector<int64_t> live_;       // per value: 1 live, 0 dropped
  std::vector<int64_t> live_count_;  // per variable: live values
  std::vector<int64_t> tables_;     // edges' original costs (kForbidden = forbidden pair)
  std::vector<int64_t> deltas_;     // per edge end and value: cost moved onto the value
  std::vector<Edge> edges_;         // the kernel's edges
  std::vector<std::vector<Arc>> arcs_;  // per variable: its edges
  std::vector<KnapsackRow> rows_;   // the memory limit
  std::vector<std::vector<int>> rows_of_;  // per variable: the rows holding it
  std::vector<char> priced_;        // per row: Lagrangian steps run on it
  std::vector<int64_t> multiplier_;  // per row: its multiplier's numerator (trailed)
  int64_t multiplier_den_ = 1;      // the multipliers' denominator
  std::vector<char> row_dirty_;     // per row: a member lost a value since the row was last fitted (not trailed: extra fits are harmless)
  bool started_ = false;            // every variable was normalized once (the first propagation)
  int64_t floor_ = 0;               // lower bound (trailed)
  int64_t cutoff_ = kForbidden;     // plans must cost less than this
  std::vector<std::pair<int64_t*, int64_t>> trail_;  // changed slots and their old values
  std::vector<int> queue_;          // variables whose values were dropped, to revise their neighbours
  std::vector<char> queued_;        // per variable: in queue_
  std::vector<int64_t> need_;       // full_support's scratch: per value of the earlier end, the cost it receives
  mutable long work_ = 0;           // values scanned (work())
  std::optional<std::chrono::steady_clock::time_point> deadline_;  // propagation stops short past it (unset: never)
  bool interrupted_ = false;        // a propagation stopped short (not trailed: the search ends)
};

}  // namespace shardsynth::synth
