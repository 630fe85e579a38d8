#pragma once
// The solver's input as plain data, in the shape of XLA's auto-sharding
// solver request and of the IOPDDL benchmark format: nodes with strategies
// (a cost and a memory usage each), edges with a cost per strategy pair.
// Nothing here knows about ops, specs or graphs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardsynth::synth {

// A cost that marks a forbidden choice (IOPDDL's 10^18).
inline constexpr int64_t kForbidden = 1'000'000'000'000'000'000;

struct ProblemNode {
  std::string label;            // name for printing (the graph node it stands for)
  std::vector<int64_t> costs;   // per strategy: cost in the cost model's unit; kForbidden = illegal
  std::vector<int64_t> usages;  // per strategy: bytes resident per device while the node is live
  int64_t live_from = 0;        // liveness interval start (inclusive), in schedule steps
  int64_t live_to = 0;          // liveness interval end (exclusive)

  int size() const { return static_cast<int>(costs.size()); }
};

struct ProblemEdge {
  int from = 0;                // source node index
  int to = 0;                  // target node index
  std::vector<int64_t> costs;  // row-major [from strategy * nodes[to].size() + to strategy]; kForbidden = illegal pair
};

struct Problem {
  std::string name;                    // problem name, for printing
  std::vector<ProblemNode> nodes;      // indexed by node id
  std::vector<ProblemEdge> edges;      // in any order; parallel edges allowed
  std::optional<int64_t> usage_limit;  // per-device bytes; unset = unlimited
};

// One strategy index per node.
using Assignment = std::vector<int>;

// Throws std::invalid_argument describing the first malformed part
// (an edge to a missing node, a table of the wrong size, a negative cost).
void validate(const Problem& problem);
// Total cost of an assignment; kForbidden when it picks a forbidden strategy
// or pair, or when, at some time step, the usages of the nodes live then
// (live_from <= t < live_to) sum to more than usage_limit. Throws std::invalid_argument on an assignment of the wrong length
// or out of range.
int64_t evaluate(const Problem& problem, const Assignment& assignment);
// The time steps at which memory must be checked: every live_from, ascending.
std::vector<int64_t> usage_check_points(const Problem& problem);
// The sets of nodes live together that memory must be checked on: for every
// time step, the nodes live then (with usages); only sets not contained in
// another one are kept, in ascending order of their first time step.
std::vector<std::vector<int>> usage_rows(const Problem& problem);
// The highest usage of an assignment over time and the first time step at
// which it occurs (live_from of the node whose start reaches it); {0, 0} for
// a problem with no live node. Usage sums saturate at kForbidden.
struct UsagePeak {
  int64_t bytes = 0;  // usage summed over the nodes live at `step`
  int64_t step = 0;   // time step of the peak
};
UsagePeak peak_usage(const Problem& problem, const Assignment& assignment);
// A lower bound on every assignment's peak: the highest sum, over the time
// steps, of the least usage among each live node's allowed (not forbidden)
// strategies, and its first step.
UsagePeak least_peak(const Problem& problem);
// Cost of one edge under an assignment.
int64_t edge_cost(const Problem& problem, const ProblemEdge& edge, const Assignment& assignment);
// Node and edge costs of an assignment, ignoring the usage limit (kForbidden
// when it picks a forbidden strategy or pair). No range checks.
int64_t cost_without_usage(const Problem& problem, const Assignment& assignment);
// Whether the assignment keeps every time step's usage within the limit
// (true when the problem has none).
bool within_usage_limit(const Problem& problem, const Assignment& assignment);

// a + b, saturating at kForbidden (a forbidden part makes the sum forbidden).
inline int64_t cost_add(int64_t a, int64_t b) {
  return (a >= kForbidden || b >= kForbidden || a + b >= kForbidden) ? kForbidden : a + b;
}

// One edge as seen from one of its end nodes.
struct Incidence {
  int edge = 0;          // index into Problem::edges
  bool is_from = false;  // whether the node is the edge's `from` (its strategy picks the table's row)
  int other = 0;         // the node at the edge's other end
};
// Per node, its incident edges in edge order.
std::vector<std::vector<Incidence>> incidence_lists(const Problem& problem);

}  // namespace shardsynth::synth
