#pragma once
// Where a graph may be cut into pipeline stages, and fairscale's cut rule.
//
// Positions are indices into the program order (program_order()): a cut at
// position p starts a new stage with the node at p. A plan with S stages is
// S - 1 increasing cuts; stage s runs the nodes [cut s, cut s+1).
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace shardsynth::synth {

// The nodes in the order the model was built (the fx graph's order) when
// that order is topological, else Graph::topological_order().
std::vector<ir::Vertex> program_order(const ir::Graph& graph);

struct CutPoints {
  std::vector<int> positions;  // candidate cut positions, ascending
  int crossing = 0;            // tensors crossing each candidate (the minimum over all positions)
};

// The graph's "layer boundaries": positions where the fewest tensors are
// live across the cut (produced before it, read at or after it), with at
// least one op before and after (graph inputs stay in stage 0, the output
// in the last stage). `extra` positions (e.g. fairscale's cuts) are added.
// Candidates are then merged until every tensor's readers outside its own
// segment lie in one segment, so that each cut tensor is sent to exactly
// one later stage whatever cuts are chosen (what makes the cost DP exact).
CutPoints candidate_cuts(const ir::Graph& graph, const std::vector<ir::Vertex>& order,
                         const std::vector<int>& extra = {});

// fairscale's auto-shard rule (fairscale.experimental.nn.auto_shard's
// _split_nodes) on the graph read as an fx graph: each node is an fx node
// whose name is the node name with "." written "_" (fx's spelling of a
// module path); nodes holding parameters are modules, and every dotted
// prefix of their names is a parent module; graph inputs are placeholders,
// graph outputs stop the walk. Returns the shard id of every order position
// (-1 for outputs). Quirks kept on purpose:
//  - the per-shard budget is total // shard_count, total counting tied
//    parameters once, while a module's count includes tied parameters, so a
//    tied weight counts in both modules that hold it;
//  - a node whose name is not a module is charged the module named by the
//    text before its first "_", when there is one (a whole parent module);
//  - the shard closes after the node that takes it over budget, and shard ids
//    are not capped, so there may be more or fewer shards than asked;
//  - a node reading a tensor from an earlier shard (other than the node just
//    before it) pulls every node since that tensor back into that shard.
std::vector<int> fairscale_shards(const ir::Graph& graph, const std::vector<ir::Vertex>& order, int shard_count);

// Cut positions of a shard assignment: where a non-empty shard starts,
// after the first. Output nodes (-1) are ignored.
std::vector<int> shard_starts(const std::vector<int>& shards);

}  // namespace shardsynth::synth
