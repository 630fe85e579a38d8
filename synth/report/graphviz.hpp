#pragma once
// The chosen plan as a Graphviz digraph (`synth --dot FILE`), after the Slapo
// PR's z3_graph_sharded.dot: one box per graph node, filled with a color per
// output spec (a legend lists them), and one edge per tensor use labelled
// with its resharding ("RS->SR", or the spec when none) and its cost.
#include <optional>
#include <string>

#include "synth/lowering.hpp"

namespace shardsynth::synth {

// The DOT text of `assignment` on the lowered problem. Deterministic:
// nodes in topological order, colors by the sorted spec texts.
std::string plan_dot(const Lowered& lowered, const Assignment& assignment);

// The absolute path of Graphviz's `dot` on PATH, if any.
std::optional<std::string> find_dot_binary();

// Renders DOT text to SVG with the `dot` binary at `dot_path`. Throws
// std::runtime_error with dot's exit status when it fails.
std::string render_svg(const std::string& dot_path, const std::string& dot_text);

// Where --svg writes a picture beside the plan's SVG: ("plan.svg", "cost") ->
// "plan.cost.svg"; a path not ending in ".svg" gets ".KIND.svg" appended.
std::string beside_svg(const std::string& graph_svg_path, const std::string& kind);

}  // namespace shardsynth::synth
