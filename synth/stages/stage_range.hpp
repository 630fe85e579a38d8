#pragma once
// The intra-stage optimum of a contiguous range of nodes (a candidate
// stage), solved with synthesize() on stage_graph(...) over the group
// sub-mesh, and cached by structural signature: two ranges whose stage
// graphs are equal up to node names (the blocks of a transformer) are solved
// once and the plan is renamed for the other.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/transfer.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"
#include "ir/spec.hpp"
#include "synth/stages/stage_dp.hpp"
#include "synth/stages/stages.hpp"
#include "synth/synthesizer.hpp"

namespace shardsynth::synth {

struct RangeSend {
  int offset = 0;                 // sending node's position minus the range start
  std::string spec;               // spec text of its "<node>:send" output on the sub-mesh
  costs::TransferCost transfer;   // one send of it to one later stage
  int64_t price = 0;              // what the plan charges per micro-batch and reader: transfer.cost, twice in training for an activation (its gradient comes back)
};

struct RangeSolution {
  bool feasible = false;        // false when no plan fits the memory budget
  int begin = 0;                // the range solved (program-order positions [begin, end)); others are renamed from it
  int end = 0;                  // one past its last position
  int64_t intra = 0;            // the stage graph's optimum, cost-model unit
  int64_t compute = 0;          // ops' own cost within it, cost-model unit
  int64_t resharding = 0;       // resharding between ops within it, cost-model unit
  int64_t memory = 0;           // peak bytes per device of the group over the stage's step (liveness-exact, one micro-batch)
  bool proven_optimal = false;  // whether CEGIS proved the optimum
  int64_t sends_cost = 0;       // sum of the sends' transfer costs (one later reader each), cost-model unit
  ir::Schedule schedule;        // the plan, with the names of [begin, end)
  std::vector<RangeSend> sends; // tensors it sends, in program order
};

class RangeSolver {
 public:
  RangeSolver(const ir::Graph& graph, std::vector<ir::Vertex> order, const ir::Mesh& mesh,
              const costs::CostModel& model, const SynthOptions& options);

  // The solution for [begin, end) (names of its representative range).
  const RangeSolution& solve(int begin, int end);
  // Stage time of [begin, end) when each tensor it sends has one later
  // reading stage: intra + sends; kForbidden when infeasible.
  int64_t time(int begin, int end);
  // A lower bound on time(begin, end) that solves nothing: the least own
  // cost of every op in the range (an op's strategies and their costs do not
  // depend on the range around it) plus its sends, which are replicated.
  int64_t lower_bound(int begin, int end) const;
  // solve(begin, end)'s schedule with the names of [begin, end).
  ir::Schedule schedule_for(int begin, int end);

  const ir::Mesh& sub_mesh() const { return sub_; }
  const std::vector<ir::Vertex>& order() const { return order_; }
  const RangeCacheStats& stats() const { return stats_; }

 private:
  // What a transfer of `producer`'s tensor costs per micro-batch: in
  // training twice, when its gradient comes back.
  int64_t transfer_price(const ir::Node& producer, const costs::TransferCost& transfer) const;
  struct KeyHash {
    std::size_t operator()(const std::vector<uint64_t>& key) const;
  };
  std::vector<uint64_t> signature(int begin, int end) const;
  // Names of [begin, end)'s nodes, then of the tensors it receives, in first-use order.
  std::vector<std::string> names_in(int begin, int end) const;
  RangeSolution solve_fresh(int begin, int end) const;

  const ir::Graph& graph_;                     // the whole model
  std::vector<ir::Vertex> order_;              // program order
  std::vector<int> pos_;                       // per vertex: its position in order_
  ir::Mesh mesh_;                              // the whole mesh
  ir::Mesh sub_;                               // the group sub-mesh
  const costs::CostModel& model_;              // prices
  SynthOptions options_;                       // solver options for every range
  std::vector<uint64_t> node_id_;              // per position: interned structural description of the node
  std::vector<uint64_t> type_id_;              // per position: interned type of its output (what a receiver sees)
  std::vector<int> param_owner_;               // flattened per (position, param): position holding the tied tensor; -1 = own
  std::vector<int> param_start_;               // per position: its first entry in param_owner_
  std::vector<int> input_pos_;                 // flattened per (position, operand): the producer's position
  std::vector<int> input_start_;               // per position: its first entry in input_pos_
  std::vector<int> last_user_;                 // per position: position of its last reader (itself when none)
  std::vector<int64_t> least_prefix_;          // per position p: sum of ops' least own cost over [0, p), cost-model unit
  std::vector<int64_t> send_cost_;             // per position: cost of sending its tensor replicated to a later stage
  std::unordered_map<std::vector<uint64_t>, int, KeyHash> by_signature_;  // signature -> index into solutions_
  std::vector<std::unique_ptr<RangeSolution>> solutions_;                 // solved representatives
  RangeCacheStats stats_;                      // asks, solves, reuses
};

// best_cuts over `bounds` (positions, first 0, last the node count) with
// stage times from `solver`, solving only the ranges that can matter: the
// cuts that are best under RangeSolver::lower_bound, solved exactly, bound
// the optimal bottleneck from above, and a range whose lower bound exceeds
// that bound gets its lower bound as its time. Any such range is slower than
// the optimal bottleneck either way, so the least bottleneck, the least sum
// within it and the chosen cuts are those of best_cuts on exact times.
CutChoice best_cuts_pruned(RangeSolver& solver, const std::vector<int>& bounds, int stages);

}  // namespace shardsynth::synth
