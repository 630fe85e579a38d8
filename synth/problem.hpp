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
// Cost of one edge under an assignment.
int64_t edge_cost(const Problem& problem, const ProblemEdge& edge, const Assignment& assignment);

}  // namespace shardsynth::synth
