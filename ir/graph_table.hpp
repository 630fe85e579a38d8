#pragma once
// The graph table `synth` prints first, as the Slapo PR does: one row per
// node (name, op, target, shape, dtype), with a `|-param` row under each
// parameter's owner.
#include <string>

#include "ir/graph.hpp"

namespace shardsynth::ir {

std::string format_graph_table(const Graph& graph);

}  // namespace shardsynth::ir
