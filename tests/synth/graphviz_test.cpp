// The plan digraph (--dot), the cost plot (--svg) and the progress line.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "costs/cost_model.hpp"
#include "golden.hpp"
#include "ir/models.hpp"
#include "synth/report/cost_plot.hpp"
#include "synth/report/graphviz.hpp"
#include "synth/report/progress_line.hpp"
#include "synth/synthesizer.hpp"

using namespace shardsynth;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string read_back(std::FILE* f) {
  std::rewind(f);
  std::string text;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) text += static_cast<char>(c);
  return text;
}

}  // namespace

TEST_CASE("plan_dot_SeedMlpOptimum") {
  const auto model = costs::make_cost_model("slapo");
  const auto result = synth::synthesize(ir::build_mlp({}), ir::parse_mesh("8"), *model);
  CHECK(synth::plan_dot(result.lowered, result.search.best) == testing::golden("mlp_plan.dot"));
}

TEST_CASE("plan_dot_ColorsFollowSpecs") {
  const auto model = costs::make_cost_model("slapo");
  const auto result = synth::synthesize(ir::build_mlp({}), ir::parse_mesh("8"), *model);
  const auto dot = synth::plan_dot(result.lowered, result.search.best);
  // fc1, gelu and fc2 are SR and share one fill; x and output are RR.
  CHECK(count(dot, "\\nSR\", fillcolor=\"#b3cde3\"") == 3);
  CHECK(count(dot, "\\nRR\", fillcolor=\"#fbb4ae\"") == 2);
  CHECK(count(dot, " -> ") == 4);
  CHECK(dot.find("\"fc2\" -> \"output\" [label=\"SR->RR\\ncost 131072\", color=\"firebrick\"]") != std::string::npos);
}

TEST_CASE("cost_plot_svg_MarksSatAndUnsatSteps") {
  const std::vector<synth::PlotStep> steps = {{0, 400, std::nullopt}, {1, std::nullopt, 100}, {2, 250, 400}, {3, std::nullopt, 250}};
  const auto svg = synth::cost_plot_svg(steps, "ns");
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>\n") == svg.size() - 7);
  CHECK(count(svg, "class=\"sat\"") == 2);
  CHECK(count(svg, "class=\"unsat\"") == 2);
  CHECK(svg.find("points=\"90.0,40.0 443.3,156.2\"") != std::string::npos);  // 400 at the top; step 2 of 3, 250 at 5/8 of the height
  CHECK(svg.find("cost against step (ns)") != std::string::npos);
  CHECK(synth::cost_plot_svg(steps, "ns") == svg);
}

TEST_CASE("cost_plot_path_BesideTheGraph") {
  CHECK(synth::cost_plot_path("out/plan.svg") == "out/plan.cost.svg");
  CHECK(synth::cost_plot_path("plan") == "plan.cost.svg");
}

TEST_CASE("ProgressLine_DrawsOnlyWhenEnabled") {
  synth::Iteration sat;
  sat.index = 2;
  sat.status = synth::CheckStatus::sat;
  sat.cost = 90;
  sat.bound = 120;
  synth::Iteration unsat;
  unsat.index = 3;
  unsat.status = synth::CheckStatus::unsat;
  unsat.bound = 90;
  CHECK(synth::progress_text(sat, 90) == "synth: step 2, best 90, bound 120");
  CHECK(synth::progress_text(unsat, std::nullopt) == "synth: step 3, best -, bound 90 (unsat)");

  std::FILE* on = std::tmpfile();
  synth::ProgressLine shown(on, true);
  shown.update(sat);
  shown.update(unsat);
  shown.clear();
  CHECK(read_back(on) == "\r\x1b[Ksynth: step 2, best 90, bound 120\r\x1b[Ksynth: step 3, best 90, bound 90 (unsat)\r\x1b[K");
  std::fclose(on);

  std::FILE* off = std::tmpfile();
  synth::ProgressLine hidden(off, false);
  hidden.update(sat);
  hidden.clear();
  CHECK(read_back(off).empty());
  std::fclose(off);
}
