#pragma once
// The time steps of one step of a lowered graph, and when each tensor is live.
//
// Graph node i of the topological order runs its forward at step i. In
// training its backward runs at step 2N-1-i (N graph nodes, reverse order)
// and the optimizer at step 2N. A tensor is live over [from, to):
//  - an inference activation, from its producer's step to its last
//    consumer's (a graph output or an unread tensor: its own step only);
//  - a training activation, saved for the backward, from its producer's
//    forward step to its producer's backward step, which comes after every
//    consumer's backward;
//  - a parameter (in training its storage, gradient and optimizer state):
//    the whole step;
//  - in training, a parameter's copy in its use's spec (gathered from its
//    storage, or a tied use's copy): its op's forward step and its backward
//    step.
// A problem node has one interval: a node that holds tensors living
// differently (an op and the following ops merged into it, gelu after
// c_fc) is live over the union of their intervals, holding all of them
// throughout. What one decision holds over another interval sits on a
// follower node of its own (synth/followers.hpp): an inference op's
// parameters, a gathered copy, a recomputed output's second life.
#include <cstdint>
#include <vector>

#include "costs/op_cost.hpp"
#include "ir/graph.hpp"

namespace shardsynth::synth {

struct Interval {
  int64_t from = 0;  // first time step live (inclusive)
  int64_t to = 0;    // first time step no longer live (exclusive)
};

struct StepClock {
  costs::Mode mode = costs::Mode::inference;  // whether the step has a backward pass and an optimizer
  int64_t nodes = 0;                          // N: graph nodes in topological order

  int64_t forward(int64_t position) const { return position; }
  int64_t backward(int64_t position) const { return 2 * nodes - 1 - position; }
  int64_t optimizer() const { return 2 * nodes; }
  // One past the last time step.
  int64_t end() const { return mode == costs::Mode::training ? 2 * nodes + 1 : nodes; }
  Interval whole() const { return {0, end()}; }
};

// Per graph vertex: the interval its output is live (see above), for the
// graph nodes in `order` (a topological order of every vertex).
std::vector<Interval> activation_intervals(const ir::Graph& graph, const std::vector<ir::Vertex>& order,
                                           const StepClock& clock);

// The smallest interval holding both (an empty `a` gives b).
Interval span(const Interval& a, const Interval& b);

}  // namespace shardsynth::synth
