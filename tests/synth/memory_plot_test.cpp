// The memory plot (synth/report/memory_plot.hpp): the per-step profile
// against peak_usage on random plans, and the SVG document's structure.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "ir/mesh.hpp"
#include "synth/liveness.hpp"
#include "synth/lowering.hpp"
#include "synth/random_plan.hpp"
#include "synth/report/memory_plot.hpp"
#include "synth/solver/problem.hpp"
#include "tiny_gpt2.hpp"

using namespace shardsynth;

namespace {

synth::Lowered lowered(const std::string& mesh, costs::Mode mode, std::optional<int64_t> memory = std::nullopt) {
  static const auto model = costs::make_cost_model("alpha-beta");
  synth::LowerOptions options;
  options.mode = mode;
  options.memory_budget = memory;
  return synth::lower(testing::tiny_gpt2(2), ir::parse_mesh(mesh), *model, options);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The profile's highest value and where it is first reached are peak_usage's.
void check_profile(const synth::Lowered& l, const synth::Assignment& a) {
  const auto profile = synth::memory_profile(l, a);
  const synth::StepClock clock{l.options.mode, static_cast<int64_t>(l.order.size())};
  CHECK(static_cast<int64_t>(profile.size()) == clock.end());
  const auto peak = synth::peak_usage(l.problem, a);
  const auto highest = std::max_element(profile.begin(), profile.end());
  REQUIRE(highest != profile.end());
  CHECK(*highest == peak.bytes);
  CHECK(highest - profile.begin() == peak.step);
  CHECK(peak.bytes > 0);
}

}  // namespace

TEST_CASE("memory_profile_PeakIsPeakUsage") {
  for (const char* mesh : {"4", "2x4"}) {
    CAPTURE(mesh);
    const auto inference = lowered(mesh, costs::Mode::inference);
    for (uint64_t seed = 0; seed < 4; ++seed) check_profile(inference, synth::random_assignment(inference, seed));
  }
  // Training under a budget (the median peak of free draws), recomputation offered.
  const auto free = lowered("4", costs::Mode::training);
  std::vector<int64_t> peaks;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    const auto a = synth::random_assignment(free, seed);
    check_profile(free, a);
    peaks.push_back(synth::peak_usage(free.problem, a).bytes);
  }
  std::sort(peaks.begin(), peaks.end());
  const auto tight = lowered("4", costs::Mode::training, peaks[2]);
  REQUIRE(tight.problem.usage_limit == peaks[2]);
  for (uint64_t seed = 0; seed < 4; ++seed) {
    const auto a = synth::random_assignment(tight, seed);
    check_profile(tight, a);
    const auto profile = synth::memory_profile(tight, a);
    CHECK(*std::max_element(profile.begin(), profile.end()) <= peaks[2]);
  }
}

TEST_CASE("memory_plot_NamesThePeakStep") {
  const auto l = lowered("4", costs::Mode::training, std::nullopt);
  const auto a = synth::random_assignment(l, 1);
  const auto plot = synth::memory_plot(l, a);
  CHECK(plot.peak_step == synth::peak_usage(l.problem, a).step);
  CHECK(plot.bytes[plot.peak_step] == synth::peak_usage(l.problem, a).bytes);
  CHECK(plot.backward_from == static_cast<int64_t>(l.order.size()));
  CHECK_FALSE(plot.budget.has_value());
  CHECK(plot.peak_name.find(" of ") != std::string::npos);
  const auto inference = lowered("4", costs::Mode::inference);
  const auto forward_only = synth::memory_plot(inference, synth::random_assignment(inference, 1));
  CHECK_FALSE(forward_only.backward_from.has_value());
  CHECK(forward_only.peak_name.rfind("forward of ", 0) == 0);
}

TEST_CASE("memory_plot_svg_StepLineBudgetAndPeak") {
  synth::MemoryPlot plot;
  plot.bytes = {1'000'000'000, 3'000'000'000, 2'500'000'000, 500'000'000};
  plot.peak_step = 1;
  plot.peak_name = "forward of h.0.mlp.c_fc";
  const auto free = synth::memory_plot_svg(plot);
  CHECK(free.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"400\"", 0) == 0);
  CHECK(count(free, "<polyline") == 1);
  CHECK(count(free, "class=\"budget\"") == 0);
  CHECK(free.find("budget ") == std::string::npos);
  CHECK(count(free, "class=\"backward\"") == 0);
  CHECK(free.find("<title>peak at step 1 (forward of h.0.mlp.c_fc): 3000000000 B (3.00 GB)</title>") != std::string::npos);
  CHECK(free.find(">GB per device</text>") != std::string::npos);
  CHECK(synth::memory_plot_svg(plot) == free);  // deterministic

  plot.budget = 4'000'000'000;
  plot.backward_from = 2;
  const auto bounded = synth::memory_plot_svg(plot);
  CHECK(count(bounded, "<polyline") == 1);
  CHECK(count(bounded, "class=\"budget\"") == 1);
  CHECK(bounded.find("stroke-dasharray") != std::string::npos);
  CHECK(bounded.find(">budget 4.00 GB</text>") != std::string::npos);
  CHECK(count(bounded, "class=\"backward\"") == 1);
  CHECK(bounded.find("</svg>\n") == bounded.size() - 7);
}

TEST_CASE("memory_plot_svg_OfARandomTrainingPlan") {
  const auto l = lowered("4", costs::Mode::training, std::nullopt);
  const auto svg = synth::memory_plot_svg(synth::memory_plot(l, synth::random_assignment(l, 2)));
  CHECK(count(svg, "<polyline") == 1);
  CHECK(count(svg, "class=\"budget\"") == 0);
  CHECK(count(svg, "class=\"backward\"") == 1);
  CHECK(count(svg, "<title>peak at step ") == 1);
}

TEST_CASE("memory_plot_path_BesideTheGraph") {
  CHECK(synth::memory_plot_path("out/plan.svg") == "out/plan.memory.svg");
  CHECK(synth::memory_plot_path("plan") == "plan.memory.svg");
}
