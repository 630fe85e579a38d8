#pragma once
// Lowering (graph, mesh, cost model) to the solver's plain Problem.
//
// One problem node per graph node that makes a sharding choice:
//  - a graph input: strategies are the specs it may arrive in;
//  - an op: strategies are its legal shardings (ir::enumerate_op_shardings),
//    each fixing the spec of every operand use and of its output; the
//    strategy's cost is the op's own cost (the all-reduce of a partial result
//    under the slapo model);
//  - a graph output: one strategy, replicated.
// An op whose rule maps its single input to its output factor for factor
// (gelu, dropout: XLA's "following") gets no node: its output shares its
// producer's node and spec. One problem edge per tensor operand use, from the
// producer's node to the consumer's, holding the resharding cost for every
// (producer strategy, consumer strategy) pair.
#include <vector>

#include "costs/cost_model.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"
#include "synth/problem.hpp"

namespace shardsynth::synth {

enum class NodeRole { input, op, output };

struct StrategyInfo {
  std::vector<ir::Spec> operands;  // spec each operand is consumed in: tensor inputs, then params (stored layout)
  ir::Spec result;                 // spec the local computation yields (partial on sharded reduction axes)
  ir::Spec output;                 // spec of the node's output tensor as consumers see it
};

struct NodeLabel {
  NodeRole role = NodeRole::op;            // what the node stands for
  ir::Vertex vertex = 0;                   // the graph node
  std::vector<StrategyInfo> strategies;    // parallel to the problem node's strategies
};

struct EdgeLabel {
  ir::Vertex producer = 0;  // graph node whose output flows (may be a following op such as gelu)
  ir::Vertex consumer = 0;  // graph node that consumes it
  int operand = 0;          // operand index at the consumer
};

struct Lowered {
  ir::Graph graph;                    // the graph lowered (copied, so the result stands alone)
  ir::Mesh mesh;                      // the mesh
  std::vector<ir::Vertex> order;      // graph nodes in topological order
  Problem problem;                    // the plain problem
  std::vector<NodeLabel> nodes;       // parallel to problem.nodes
  std::vector<EdgeLabel> edges;       // parallel to problem.edges
  std::vector<int> owner;             // per graph vertex: problem node deciding its output spec
};

// Throws ir::InputError naming the node when an op has no legal sharding.
Lowered lower(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model);

// Problem edge indices per consuming graph vertex, in operand order.
std::vector<std::vector<int>> edges_by_consumer(const Lowered& lowered);

// The spec of graph node v's output under an assignment.
const ir::Spec& output_spec(const Lowered& lowered, const Assignment& assignment, ir::Vertex v);

}  // namespace shardsynth::synth
