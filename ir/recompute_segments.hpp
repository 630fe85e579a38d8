#pragma once
// Segments for activation recomputation, from the graph alone (the solver
// prices recomputation with them, synth/recompute.hpp; the runtime recomputes
// by them, runtime/forward_pass.hpp).
//
// A topological order is cut wherever at most one op output is live across
// the cut (the residual stream between two blocks: Chen et al.'s checkpoint
// candidates). Consecutive pieces between cuts are grouped into segments: as
// many as the period of the graph's repeated blocks (GPT-2's or Llama's
// attention and MLP halves: one layer per segment), or about sqrt(pieces)
// when nothing repeats (Chen et al.'s sqrt(n) rule). An op output may be
// recomputed when every reader of it is in its own segment. A segment's
// recomputed outputs are computed again, in forward order, just before the
// backward of the segment's last node; their inputs are then at hand: the
// segment's own recomputed outputs come first, and everything read across a
// cut is kept.
#include <cstdint>
#include <vector>

#include "ir/graph.hpp"

namespace shardsynth::ir {

struct RecomputeSegments {
  std::vector<int> segment;          // per graph vertex: index of the segment holding its position
  std::vector<int64_t> last_read;    // per graph vertex: position of its last forward reader (its own when none)
  std::vector<int64_t> segment_end;  // per segment: position of its last node
};

// The segments of a topological `order` of `graph` (above).
RecomputeSegments recompute_segments(const Graph& graph, const std::vector<Vertex>& order);

// Whether vertex v's output may be recomputed: an op (not a graph input or
// output) whose readers all lie in its segment.
bool may_recompute(const Graph& graph, const RecomputeSegments& segments, Vertex v);

}  // namespace shardsynth::ir
