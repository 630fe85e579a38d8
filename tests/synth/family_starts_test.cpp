// The plan families as start plans (synth/family_starts.hpp): a family's
// restriction of a lowered problem is what lowering with its filter gives,
// and the search for the optimum under a budget starts from the families'
// plans, scores each as a step, and ends no worse than the cheapest.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "ir/mesh.hpp"
#include "sanitized.hpp"
#include "synth/family_starts.hpp"
#include "synth/lowering.hpp"
#include "synth/plans.hpp"
#include "synth/solver/problem.hpp"
#include "synth/synthesizer.hpp"
#include "tiny_gpt2.hpp"

namespace shardsynth::synth {
namespace {

// Under the sanitizers one layer: each lowering there takes some 12 s per
// layer (ASan, two cores), and one layer has every kind of node already.
constexpr int kLayers = testing::kSanitized ? 1 : 2;

std::vector<std::string> families() {
  std::vector<std::string> names = plan_names();
  names.erase(std::remove(names.begin(), names.end(), std::string(kRandomPlan)), names.end());
  return names;
}

}  // namespace

TEST_CASE("restrict_problem_ForbidsWhatLoweringWithTheFilterForbids") {
  const ir::Graph graph = testing::tiny_gpt2(kLayers);
  const auto model = costs::make_cost_model("alpha-beta");
  struct Setting {
    const char* mesh;
    costs::Mode mode;
  };
  for (const Setting& setting : {Setting{"2x4", costs::Mode::training}, Setting{"4", costs::Mode::inference}}) {
    const ir::Mesh mesh = ir::parse_mesh(setting.mesh);
    LowerOptions options;
    options.mode = setting.mode;
    options.memory_budget = int64_t{1} << 40;  // in training: recompute twins too
    const Lowered whole = lower(graph, mesh, *model, options);
    for (const std::string& family : families()) {
      CAPTURE(family);
      CAPTURE(setting.mesh);
      LowerOptions filtered = options;
      filtered.allow = plan_filter(family, graph, mesh);
      const Problem want = lower(graph, mesh, *model, filtered).problem;
      const Problem got = restrict_problem(whole, filtered.allow);
      REQUIRE(got.nodes.size() == want.nodes.size());
      REQUIRE(got.edges.size() == want.edges.size());
      int forbidden = 0;
      for (std::size_t n = 0; n < got.nodes.size(); ++n) {
        CHECK(got.nodes[n].costs == want.nodes[n].costs);
        forbidden += static_cast<int>(std::count(got.nodes[n].costs.begin(), got.nodes[n].costs.end(), kForbidden));
      }
      for (std::size_t e = 0; e < got.edges.size(); ++e) CHECK(got.edges[e].costs == want.edges[e].costs);
      CHECK(forbidden > 0);
    }
  }
}

TEST_CASE("synthesize_StartsFromTheFamiliesPlansUnderABudget") {
  const ir::Graph graph = testing::tiny_gpt2(kLayers);
  const ir::Mesh mesh = ir::parse_mesh("2x4");
  const auto model = costs::make_cost_model("alpha-beta");
  // A budget a little above the least peak the Megatron family reaches:
  // it binds, and Megatron's plans fit.
  LowerOptions probe;
  probe.mode = costs::Mode::training;
  probe.memory_budget = int64_t{1} << 40;
  probe.allow = plan_filter("megatron", graph, mesh);
  const int64_t budget = least_peak(lower(graph, mesh, *model, probe).problem).bytes * 11 / 10;
  SynthOptions options;
  options.lower.mode = costs::Mode::training;
  options.lower.memory_budget = budget;
  options.cegis.time_limit_s = testing::search_seconds(2);
  // The starts seed the anytime search; the Pareto elimination, which runs
  // first, may prove this problem before it and skip it (how soon depends on
  // the build's speed), so it is off here.
  options.cegis.elimination = false;
  const SynthResult result = synthesize(graph, mesh, *model, options);
  const Problem& problem = result.lowered.problem;
  int64_t cheapest = kForbidden;
  std::size_t k = 0;
  for (; k < result.search.iterations.size() && result.search.iterations[k].source.rfind("plan:", 0) == 0; ++k) {
    const Iteration& it = result.search.iterations[k];
    const std::string family = it.source.substr(5);
    CAPTURE(family);
    // A plan of its family, within the budget, cheaper than the starts before it.
    const Problem restricted = restrict_problem(result.lowered, plan_filter(family, graph, mesh));
    CHECK(evaluate(restricted, it.assignment) == it.cost);
    CHECK(evaluate(problem, it.assignment) == it.cost);
    CHECK(it.cost < cheapest);
    cheapest = it.cost;
  }
  REQUIRE(k >= 1);  // at least Megatron's plan
  CHECK(result.search.best_cost <= cheapest);
  for (; k < result.search.iterations.size(); ++k) {
    const Iteration& it = result.search.iterations[k];
    CHECK(it.source.rfind("plan:", 0) != 0);
    if (it.status == CheckStatus::sat) CHECK(it.cost < cheapest);
  }
  MESSAGE("cheapest family plan " << cheapest << ", the search's " << result.search.best_cost
                                  << std::string(result.search.proven_optimal ? " (proven)" : ""));
  // Without family starts the trace has no such steps. (On this problem the
  // search alone may find no plan at all within the limit.)
  options.family_starts = false;
  options.cegis.time_limit_s = testing::search_seconds(1);
  try {
    const SynthResult direct = synthesize(graph, mesh, *model, options);
    for (const Iteration& it : direct.search.iterations) CHECK(it.source.rfind("plan:", 0) != 0);
    MESSAGE("without family starts: " << direct.search.best_cost);
  } catch (const NoPlanError& e) {
    MESSAGE("without family starts: " << std::string(e.what()));
  }
}

}  // namespace shardsynth::synth
