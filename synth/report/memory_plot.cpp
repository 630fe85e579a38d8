#include "synth/report/memory_plot.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "synth/liveness.hpp"
#include "synth/memory_figures.hpp"
#include "synth/report/graphviz.hpp"
#include "synth/report/plot_svg.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

namespace {

using namespace plot;  // the shared canvas: kWidth..., num

// Bytes as GB (10^9 bytes) with two decimals: "1.25".
std::string gb(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", static_cast<double>(bytes) / 1e9);
  return text;
}

}  // namespace

std::vector<int64_t> memory_profile(const Lowered& lowered, const Assignment& assignment) {
  const Problem& problem = lowered.problem;
  const StepClock clock{lowered.options.mode, static_cast<int64_t>(lowered.order.size())};
  int64_t steps = clock.end();
  for (std::size_t n = 0; n < assignment.size() && n < problem.nodes.size(); ++n) {
    steps = std::max(steps, problem.nodes[n].live_to);
  }
  // delta[t]: the change in use from step t-1 to step t; usages up to 10^18
  // each, so their sums are kept in 128 bits and saturate at kForbidden.
  std::vector<__int128> delta(static_cast<std::size_t>(steps) + 1, 0);
  for (std::size_t n = 0; n < assignment.size() && n < problem.nodes.size(); ++n) {
    const ProblemNode& node = problem.nodes[n];
    if (node.live_from >= node.live_to || node.usages.empty() || node.live_from < 0) continue;
    const int64_t bytes = node.usages[assignment[n]];
    delta[node.live_from] += bytes;
    delta[node.live_to] -= bytes;
  }
  std::vector<int64_t> profile(static_cast<std::size_t>(steps), 0);
  __int128 used = 0;
  for (int64_t t = 0; t < steps; ++t) {
    used += delta[t];
    profile[t] = used >= kForbidden ? kForbidden : static_cast<int64_t>(used);
  }
  return profile;
}

MemoryPlot memory_plot(const Lowered& lowered, const Assignment& assignment) {
  MemoryPlot plot;
  plot.bytes = memory_profile(lowered, assignment);
  plot.budget = lowered.problem.usage_limit;
  if (lowered.options.mode == costs::Mode::training) {
    const StepClock clock{lowered.options.mode, static_cast<int64_t>(lowered.order.size())};
    plot.backward_from = clock.backward(clock.nodes - 1);
  }
  const auto highest = std::max_element(plot.bytes.begin(), plot.bytes.end());  // the first of the highest
  plot.peak_step = highest == plot.bytes.end() ? 0 : highest - plot.bytes.begin();
  plot.peak_name = lowered.order.empty() ? "" : step_name(lowered, plot.peak_step);
  return plot;
}

std::string memory_plot_svg(const MemoryPlot& plot) {
  int64_t top = 1;
  for (int64_t b : plot.bytes) top = std::max(top, b);
  if (plot.budget) top = std::max(top, *plot.budget);
  const int64_t steps = std::max<int64_t>(1, static_cast<int64_t>(plot.bytes.size()));
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  // Step t covers [t, t + 1) on the x axis.
  auto x = [&](int64_t step) { return kLeft + plot_w * static_cast<double>(step) / static_cast<double>(steps); };
  auto y = [&](int64_t bytes) {
    return kTop + plot_h * (1.0 - static_cast<double>(bytes) / static_cast<double>(top));
  };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" viewBox=\"0 0 "
      << kWidth << " " << kHeight << "\" font-family=\"Helvetica\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << num(kWidth / 2)
      << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">memory per device against time step (GB)</text>\n"
      << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(kTop + plot_h) << "\" x2=\"" << num(kLeft + plot_w) << "\" y2=\""
      << num(kTop + plot_h) << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(kLeft) << "\" y2=\"" << num(kTop + plot_h)
      << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(kTop + 4) << "\" text-anchor=\"end\">" << gb(top) << "</text>\n"
      << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(kTop + plot_h + 4) << "\" text-anchor=\"end\">0</text>\n"
      << "<text x=\"" << num(kLeft) << "\" y=\"" << num(kTop + plot_h + 18) << "\" text-anchor=\"middle\">0</text>\n"
      << "<text x=\"" << num(kLeft + plot_w) << "\" y=\"" << num(kTop + plot_h + 18) << "\" text-anchor=\"middle\">" << steps
      << "</text>\n"
      << "<text x=\"" << num(kLeft + plot_w / 2) << "\" y=\"" << num(kHeight - 10)
      << "\" text-anchor=\"middle\">time step</text>\n"
      << "<text x=\"" << num(18) << "\" y=\"" << num(kTop + plot_h / 2) << "\" text-anchor=\"middle\" transform=\"rotate(-90 "
      << num(18) << " " << num(kTop + plot_h / 2) << ")\">GB per device</text>\n";
  if (plot.backward_from) {
    svg << "<line class=\"backward\" x1=\"" << num(x(*plot.backward_from)) << "\" y1=\"" << num(kTop) << "\" x2=\""
        << num(x(*plot.backward_from)) << "\" y2=\"" << num(kTop + plot_h)
        << "\" stroke=\"#999999\" stroke-opacity=\"0.5\"><title>backward from step " << *plot.backward_from
        << "</title></line>\n";
  }
  if (plot.budget) {
    svg << "<line class=\"budget\" x1=\"" << num(kLeft) << "\" y1=\"" << num(y(*plot.budget)) << "\" x2=\""
        << num(kLeft + plot_w) << "\" y2=\"" << num(y(*plot.budget))
        << "\" stroke=\"#d62728\" stroke-dasharray=\"6,4\"/>\n"
        << "<text x=\"" << num(kLeft + plot_w - 4) << "\" y=\"" << num(y(*plot.budget) - 4)
        << "\" text-anchor=\"end\" fill=\"#d62728\">budget " << gb(*plot.budget) << " GB</text>\n";
  }
  // A step line: flat over each step, vertical between steps.
  std::string line;
  for (std::size_t t = 0; t < plot.bytes.size(); ++t) {
    const auto step = static_cast<int64_t>(t);
    line += (line.empty() ? "" : " ") + num(x(step)) + "," + num(y(plot.bytes[t])) + " " + num(x(step + 1)) + "," +
            num(y(plot.bytes[t]));
  }
  if (!line.empty()) svg << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"" << line << "\"/>\n";
  if (!plot.bytes.empty()) {
    const int64_t peak = plot.bytes[plot.peak_step];
    svg << "<circle class=\"peak\" cx=\"" << num((x(plot.peak_step) + x(plot.peak_step + 1)) / 2) << "\" cy=\""
        << num(y(peak)) << "\" r=\"4\" fill=\"#1f77b4\"><title>peak at step " << plot.peak_step << " ("
        << plot.peak_name << "): " << peak << " B (" << gb(peak) << " GB)</title></circle>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string memory_plot_path(const std::string& graph_svg_path) { return beside_svg(graph_svg_path, "memory"); }

}  // namespace shardsynth::synth
