#include "synth/report/cost_plot.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "synth/report/graphviz.hpp"
#include "synth/report/plot_svg.hpp"

namespace shardsynth::synth {

namespace {

using namespace plot;  // the shared canvas: kWidth..., num

}  // namespace

std::vector<PlotStep> plot_steps(const std::vector<Iteration>& iterations) {
  std::vector<PlotStep> steps;
  for (const auto& it : iterations) {
    PlotStep step;
    step.step = it.index;
    if (it.status == CheckStatus::sat) step.cost = it.cost;
    step.bound = it.bound;
    steps.push_back(step);
  }
  return steps;
}

std::string cost_plot_svg(const std::vector<PlotStep>& steps, const std::string& unit) {
  int64_t top = 1;
  for (const auto& s : steps) {
    if (s.cost) top = std::max(top, *s.cost);
    if (s.bound) top = std::max(top, *s.bound);
  }
  const int last = steps.empty() ? 1 : std::max(1, steps.back().step);
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x = [&](int step) { return kLeft + plot_w * step / last; };
  auto y = [&](int64_t value) { return kTop + plot_h * (1.0 - static_cast<double>(value) / static_cast<double>(top)); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight << "\" viewBox=\"0 0 "
      << kWidth << " " << kHeight << "\" font-family=\"Helvetica\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << num(kWidth / 2) << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">cost against step ("
      << unit << ")</text>\n"
      << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(kTop + plot_h) << "\" x2=\"" << num(kLeft + plot_w) << "\" y2=\""
      << num(kTop + plot_h) << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(kLeft) << "\" y2=\"" << num(kTop + plot_h)
      << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(kTop + 4) << "\" text-anchor=\"end\">" << top << "</text>\n"
      << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(kTop + plot_h + 4) << "\" text-anchor=\"end\">0</text>\n"
      << "<text x=\"" << num(kLeft) << "\" y=\"" << num(kTop + plot_h + 18) << "\" text-anchor=\"middle\">0</text>\n"
      << "<text x=\"" << num(kLeft + plot_w) << "\" y=\"" << num(kTop + plot_h + 18) << "\" text-anchor=\"middle\">" << last
      << "</text>\n"
      << "<text x=\"" << num(kLeft + plot_w / 2) << "\" y=\"" << num(kHeight - 10) << "\" text-anchor=\"middle\">step</text>\n";
  std::string line;
  for (const auto& s : steps) {
    if (s.cost) line += (line.empty() ? "" : " ") + num(x(s.step)) + "," + num(y(*s.cost));
  }
  if (!line.empty()) svg << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"" << line << "\"/>\n";
  for (const auto& s : steps) {
    if (s.cost) {
      svg << "<circle class=\"sat\" cx=\"" << num(x(s.step)) << "\" cy=\"" << num(y(*s.cost)) << "\" r=\"4\" fill=\"#1f77b4\"><title>step "
          << s.step << ": cost " << *s.cost << "</title></circle>\n";
    } else if (s.bound) {
      svg << "<circle class=\"unsat\" cx=\"" << num(x(s.step)) << "\" cy=\"" << num(y(*s.bound))
          << "\" r=\"4\" fill=\"none\" stroke=\"#d62728\"><title>step " << s.step << ": nothing below " << *s.bound
          << "</title></circle>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string cost_plot_path(const std::string& graph_svg_path) { return beside_svg(graph_svg_path, "cost"); }

}  // namespace shardsynth::synth
