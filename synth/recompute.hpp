#pragma once
// Activation recomputation in training: an op's output may be dropped once
// the forward pass has read it for the last time and computed again for the
// backward pass, trading its saved bytes for its forward cost a second time.
//
// Which outputs may be recomputed, and when, is ir/recompute_segments.hpp's:
// a segment's recomputed outputs are computed again just before the
// backward of the segment's last node (time step R).
//
// A recomputed output is live over [forward, last forward read] and again
// over [R, its backward]. The problem expresses this with one interval per
// node: lowering gives each op node that may recompute a twin of every
// strategy (StrategyInfo::recompute), shrinks its interval to the forward
// part, and adds two followers of it (synth/followers.hpp: one strategy per
// distinct byte count, tied to the op by a 0/forbidden edge): "NODE:saved" over
// (last forward read, R), holding the bytes only when kept, and
// "NODE:recomputed" over [R, backward], holding them either way.
//
// A twin's price is the forward once more: the op's own cost
// (OpCost::recompute), each operand edge's forward resharding, and the
// gather of each parameter it reads in another spec than stored (its
// storage or tied edge). That gathered copy lives at step R only and is not
// held in the problem: the runtime counts it as unplanned transient bytes.
#include <cstdint>
#include <vector>

#include "costs/cost_model.hpp"
#include "ir/graph.hpp"
#include "ir/recompute_segments.hpp"
#include "synth/lowered.hpp"

namespace shardsynth::synth {

// Adds the followers of every op node with recompute twins (after
// set_liveness): splits its interval, adds "NODE:saved" and
// "NODE:recomputed" and their edges, and forbids the twins of a node whose
// following ops are read outside its segment.
void add_saved_nodes(Lowered& out, const ir::RecomputeSegments& segments);

// The op nodes whose chosen strategy recomputes, in problem node order.
std::vector<int> recomputed_nodes(const Lowered& lowered, const Assignment& assignment);

}  // namespace shardsynth::synth
