#pragma once
// A plot of a plan's memory over the step as SVG, written by our own code
// (`synth --svg`, beside the plan as <name>.memory.svg): the bytes in use per
// device at every time step of synth/liveness.hpp, with the budget as a
// dashed line, the peak as a dot naming its step, and in training a faint
// line where the backward starts.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "synth/lowering.hpp"

namespace shardsynth::synth {

// The bytes in use per device at every time step (index) of the lowered
// problem's clock under `assignment`: each problem node holds
// usages[assignment[n]] over [live_from, live_to). Its highest value is
// peak_usage's bytes (saturating at kForbidden like it), first reached at
// peak_usage's step. Linear in nodes + steps (a difference array).
std::vector<int64_t> memory_profile(const Lowered& lowered, const Assignment& assignment);

struct MemoryPlot {
  std::vector<int64_t> bytes;            // per time step (index): bytes in use per device
  std::optional<int64_t> budget;         // per-device bytes of the usage limit; unset = none
  std::optional<int64_t> backward_from;  // training: the first backward time step; unset in inference
  int64_t peak_step = 0;                 // the first time step of the highest value of `bytes`
  std::string peak_name;                 // step_name of peak_step: "forward of h.3.mlp.c_fc", "optimizer"
};

// The plot's data for `assignment` on the lowered problem.
MemoryPlot memory_plot(const Lowered& lowered, const Assignment& assignment);

// A fixed-size (640 x 400 px) SVG document; deterministic text.
std::string memory_plot_svg(const MemoryPlot& plot);

// "plan.svg" -> "plan.memory.svg": where --svg writes the plot beside the graph.
std::string memory_plot_path(const std::string& graph_svg_path);

}  // namespace shardsynth::synth
