#pragma once
// What lowering (lowering.hpp) produces: the plain Problem with its labels
// (which graph node and which specs each problem node and edge stands for),
// and the accessors that read a plan back through them. The passes that
// build parts of it (followers.hpp, recompute.hpp, liveness.hpp) and the
// reports that read it include this header, not the lowering itself.
#include <vector>

#include <functional>
#include <optional>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "costs/precision.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"
#include "synth/solver/problem.hpp"
#include "synth/storage.hpp"

namespace shardsynth::synth {

enum class NodeRole { input, op, output, storage, follower };

// What a follower node (synth/followers.hpp) holds for its leader.
enum class FollowerKind {
  none,        // not a follower
  saved,       // a recomputable op's outputs from their last forward read to their recomputation, when kept
  recomputed,  // a recomputable op's outputs from their recomputation to their backward
  params,      // inference: an op's untied parameters, the whole step
  gathered,    // training: a parameter's copy in its use spec around its op's forward or backward
};

struct StrategyInfo {
  std::vector<ir::Spec> operands;  // spec each operand is consumed in: tensor inputs, then params (stored layout)
  ir::Spec result;                 // spec the local computation yields (partial on sharded reduction axes)
  ir::Spec output;                 // spec of the node's output tensor as consumers see it
  std::vector<std::vector<int>> grad_partial;  // per operand: mesh axes its gradient comes out partial on
  costs::OpCost cost;              // the op's own cost under this strategy (not its edges)
  std::vector<std::vector<int>> factor_axes;  // ops: per factor of the op's rule, the mesh axes sharding it
  std::optional<StorageChoice> storage;       // storage nodes only: where the parameter lives (operands: grad, state;
                                              // result and output: the stored spec)
  bool recompute = false;  // training ops: the output is dropped after its last forward read and computed again for
                           // the backward (synth/recompute.hpp); followers: a copy of the leader strategy it stands for
};

// Decides whether a strategy of graph node v may be chosen (pins, plans).
using StrategyFilter = std::function<bool(const ir::Graph& graph, ir::Vertex v, const StrategyInfo& strategy)>;

struct LowerOptions {
  costs::Mode mode = costs::Mode::inference;  // inference or training
  std::optional<int64_t> memory_budget;       // per-device bytes; unset = no limit
  StrategyFilter allow;                       // strategies it rejects are forbidden; empty = all allowed
  bool recompute = true;                      // training with a budget: offer recomputing op outputs (synth/recompute.hpp)
  costs::PrecisionPolicy precision;           // training: gradient-reduce and master dtypes (costs/precision.hpp)
};

struct NodeLabel {
  NodeRole role = NodeRole::op;            // what the node stands for
  ir::Vertex vertex = 0;                   // the graph node (a storage node or a follower: the op it serves)
  std::vector<StrategyInfo> strategies;    // parallel to the problem node's strategies
  int param = -1;                          // storage nodes and gathered followers: index of the parameter in the op's params
  int of = -1;                             // followers: the problem node it follows (its leader)
  FollowerKind holds = FollowerKind::none;  // followers: what it holds
};

struct EdgeLabel {
  ir::Vertex producer = 0;  // graph node whose output flows (may be a following op such as gelu)
  ir::Vertex consumer = 0;  // graph node that consumes it
  int operand = 0;          // operand index at the consumer
};

// A problem edge between a parameter's stored node and a node using it
// tied (training only): it prices costs::tied_param_cost.
struct TiedEdgeLabel {
  ir::Vertex stored = 0;  // graph node that holds the parameter (wte)
  int stored_param = 0;   // index of the parameter in that node's params
  ir::Vertex use = 0;     // graph node whose parameter is tied to it (lm_head)
  int use_param = 0;      // index of the tied parameter in the use's params
};

// A problem edge from a parameter's storage node to its op (training): it
// prices costs::storage_cost, forbidden where the storage choice serves
// another use spec than the op's strategy reads.
struct StorageEdgeLabel {
  ir::Vertex vertex = 0;  // the op
  int param = 0;          // index of the parameter in its params
};

struct Lowered {
  ir::Graph graph;                    // the graph lowered (copied, so the result stands alone)
  ir::Mesh mesh;                      // the mesh
  std::vector<ir::Vertex> order;      // graph nodes in topological order
  Problem problem;                    // the plain problem
  std::vector<NodeLabel> nodes;       // parallel to problem.nodes
  std::vector<EdgeLabel> edges;       // parallel to the first edges.size() problem edges (operand edges)
  std::vector<TiedEdgeLabel> tied;    // parallel to the problem edges after them (tied parameters, training)
  std::vector<StorageEdgeLabel> stored;  // parallel to the problem edges after those (storage, training); the
                                         // problem edges after them tie followers to their leaders (0 or forbidden)
  std::vector<int> owner;             // per graph vertex: problem node deciding its output spec
  std::vector<std::vector<int>> storage;  // per graph vertex, per param: its storage problem node; -1 = none
  LowerOptions options;               // how it was lowered
};

// The spec in which strategy `strategy` of the node owning graph node v reads
// v's parameter `param` (an index into the node's params).
const ir::Spec& param_spec(const Lowered& lowered, ir::Vertex v, int param, std::size_t strategy);

// The storage choice of graph node v's parameter `param` under an
// assignment; nullopt when it has no storage node (inference, tied uses).
std::optional<StorageChoice> storage_choice(const Lowered& lowered, const Assignment& assignment, ir::Vertex v, int param);

// Problem edge indices per consuming graph vertex, in operand order.
std::vector<std::vector<int>> edges_by_consumer(const Lowered& lowered);

// The spec of graph node v's output under an assignment.
const ir::Spec& output_spec(const Lowered& lowered, const Assignment& assignment, ir::Vertex v);

}  // namespace shardsynth::synth
