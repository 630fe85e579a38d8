#pragma once
// What the SVG plots of synth --svg share (cost_plot.hpp, memory_plot.hpp):
// the canvas, its margins and how a coordinate is written.
#include <cstdio>
#include <string>

namespace shardsynth::synth::plot {

inline constexpr double kWidth = 640, kHeight = 400;                     // px
inline constexpr double kLeft = 90, kRight = 20, kTop = 40, kBottom = 50;  // px margins

// A coordinate with one decimal ("12.5"): deterministic text.
inline std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

}  // namespace shardsynth::synth::plot
