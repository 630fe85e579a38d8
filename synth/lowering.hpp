#pragma once
// Lowering (graph, mesh, cost model, mode) to the solver's plain Problem.
//
// One problem node per graph node that makes a sharding choice:
//  - a graph input: strategies are the specs it may arrive in;
//  - an op: strategies are its legal shardings (ir::enumerate_op_shardings),
//    each fixing the spec of every operand use and of its output; the
//    strategy's cost is the op's own cost (costs::op_cost: compute, in-op
//    partial resolution, gradient sync) and its usage the bytes of its
//    output (and of its following ops' outputs);
//  - a graph output: replicated, or any non-partial spec when the model allows.
// An op whose rule maps its single input to its output factor for factor
// (gelu, dropout: XLA's "following") gets no node: its output shares its
// producer's node and spec; when the model lets partial sums flow, only ops
// that distribute over them (dropout, scale) follow. One problem edge per tensor operand use, from the
// producer's node to the consumer's, holding the resharding cost for every
// (producer strategy, consumer strategy) pair (costs::edge_cost, with the
// gradient's way back in training). A memory budget becomes the problem's
// usage limit, checked at every time step of the step's order: each node is
// live over the interval of what it holds (synth/liveness.hpp: an activation
// until its last use, or in training until its backward). What a decision
// holds over other intervals sits on follower nodes (synth/followers.hpp):
// in inference an op's parameters, the whole step; in training a parameter's
// storage node (synth/storage.hpp), the whole step, with its gathered copies
// around its op's forward and backward, and a recomputed output's second life
// (synth/recompute.hpp).
#include "costs/cost_model.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "synth/lowered.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// Throws ir::InputError naming the node when an op has no legal sharding.
Lowered lower(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
              const LowerOptions& options = {});

// The lowered problem restricted to what `allow` accepts, as lowering with
// LowerOptions::allow = allow would give it, without lowering again: the
// strategies of the deciding nodes (not followers) that it rejects, and then
// the storage choices no allowed strategy of their op reads, are forbidden.
// Nodes, strategies and edges stay the same, so an assignment of either
// problem is one of the other.
Problem restrict_problem(const Lowered& lowered, const StrategyFilter& allow);

}  // namespace shardsynth::synth
