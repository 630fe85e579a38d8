#pragma once
// Depth-first branch and bound on a network with knapsack rows
// (cost_network.hpp), for plans cheaper than an incumbent and for the proof
// that there are none. Each search node propagates (soft arc consistency,
// the rows' room, and the rows' multipliers moved to where the subproblem
// wants them), so the bound rises as choices are made, unlike prices fixed
// at the root. At each node the plan of every variable's cheapest value is
// scored: it may be a cheaper plan, and when it costs no more than the
// floor the node is done. Otherwise the search branches where that plan
// pays: on an end of the edge with the largest residual cost under it, or
// on a member of the row it overflows most; failing both, on the variable
// with the fewest live values per failure it took part in (dom/wdeg).
// Branching is binary: the variable takes its value (the incumbent's when
// still live, else the cheapest), or that value is dropped. When the search
// ends without running out of time or work, no plan scores below the
// incumbent at the end.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/problem.hpp"
#include "synth/solver/row_penalties.hpp"

namespace shardsynth::synth {

struct NetworkSearchOptions {
  std::optional<std::chrono::steady_clock::time_point> deadline;  // stop (outcome "time limit") at this time (unset = none)
  long max_work = 0;   // values scanned at most, by the network and by scoring each node's plan (outcome "work limit"); 0 = no limit
  std::function<bool(long)> stop_at_work;  // asked at each node with the work so far: true stops the search (outcome "work limit"; unset = never)
};

struct NetworkSearch {
  std::string outcome = "not run";  // "closed" (no plan cheaper than the incumbent), "time limit", "work limit"
  int64_t incumbent = kForbidden;   // the best kernel cost at the end (the one handed in, or a cheaper plan's)
  Assignment plan;                  // the cheapest kernel plan found below the one handed in (empty when none)
  int64_t root_bound = 0;           // offset + the floor after the root's propagation: no kernel plan costs less (= incumbent when the root closes)
  long nodes = 0;                   // search nodes visited
  long work = 0;                    // values scanned (NetworkSearchOptions::max_work)
  int priced_rows = 0;              // memory rows with Lagrangian steps
  double ms = 0;                    // wall time, milliseconds
};

// What the search runs on: a network with the memory limit as knapsack
// rows, a bound relation to the true cost, and the true cost itself.
struct NetworkInput {
  Problem network;                 // node costs and edge tables, every entry at least 0 (as reparameterize leaves them); usages not read
  std::vector<KnapsackRow> rows;   // the memory limit over the network's variables
  RowMultipliers multipliers;      // per row, the multiplier whose penalty the network's costs hold (penalize_rows; empty = none)
  int64_t offset = 0;              // for every plan x that fits the rows: score(x) >= offset + network cost(x)
  std::function<int64_t(const Assignment&)> score;  // a plan's true cost (kForbidden when it breaks the limit)
};

// Searches for plans whose score is below `incumbent` (kForbidden = none
// known). `hint` (a plan, or empty) orders each variable's values: its
// value first. `on_plan` is called with each cheaper plan and its score,
// in order.
NetworkSearch search_network(const NetworkInput& input, int64_t incumbent, const Assignment& hint,
                             const NetworkSearchOptions& options,
                             const std::function<void(const Assignment&, int64_t)>& on_plan = {});

}  // namespace shardsynth::synth
