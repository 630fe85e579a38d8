#pragma once
// A plot of the search as SVG, written by our own code (`synth --svg`): the
// cost of every sat step against the step number, with the bounds asked
// below it, so the descent to the proven optimum shows at a glance.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

struct PlotStep {
  int step = 0;                  // the step number (x)
  std::optional<int64_t> cost;   // sat: the assignment's cost (y); unset on unsat/unknown
  std::optional<int64_t> bound;  // the bound asked (cost < bound); unset when unbounded
};

// The plot's points of a search's steps.
std::vector<PlotStep> plot_steps(const std::vector<Iteration>& iterations);

// A fixed-size (640 x 400 px) SVG document; deterministic text.
std::string cost_plot_svg(const std::vector<PlotStep>& steps, const std::string& unit);

// "plan.svg" -> "plan.cost.svg": where --svg writes the plot beside the graph.
std::string cost_plot_path(const std::string& graph_svg_path);

}  // namespace shardsynth::synth
