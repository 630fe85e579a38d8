// Random legal plans (synth/random_plan.hpp) and their shrinking.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/gpt2.hpp"
#include "ir/models.hpp"
#include "ir/schedule.hpp"
#include "synth/random_plan.hpp"
#include "synth/schedule_builder.hpp"
#include "synth/synthesizer.hpp"

using namespace shardsynth;

namespace {

// GPT-2 with 2 blocks of 4 heads, hidden 64, 8 sequences of 16 tokens, 256 words.
ir::Graph small_gpt2() { return ir::build_gpt2({.n_layer = 2, .n_head = 4, .n_embd = 64, .seq = 16, .batch = 8, .vocab = 256}); }

synth::Lowered lowered(const ir::Graph& graph, const std::string& mesh, costs::Mode mode = costs::Mode::inference,
                       std::optional<int64_t> memory = std::nullopt) {
  static const auto model = costs::make_cost_model("alpha-beta");
  synth::LowerOptions options;
  options.mode = mode;
  options.memory_budget = memory;
  return synth::lower(graph, ir::parse_mesh(mesh), *model, options);
}

}  // namespace

TEST_CASE("random_assignment_SameSeedSamePlan") {
  const auto l = lowered(small_gpt2(), "2x4");
  CHECK(synth::random_assignment(l, 7) == synth::random_assignment(l, 7));
  std::set<synth::Assignment> plans;
  for (uint64_t seed = 0; seed < 10; ++seed) plans.insert(synth::random_assignment(l, seed));
  CHECK(plans.size() == 10);
}

TEST_CASE("random_assignment_EveryPlanIsLegal") {
  const ir::Graph graph = small_gpt2();
  for (const char* mesh : {"2", "8", "2x4"}) {
    for (costs::Mode mode : {costs::Mode::inference, costs::Mode::training}) {
      const auto l = lowered(graph, mesh, mode);
      for (uint64_t seed = 0; seed < 20; ++seed) {
        CAPTURE(mesh);
        CAPTURE(seed);
        CHECK(synth::evaluate(l.problem, synth::random_assignment(l, seed)) < synth::kForbidden);
      }
    }
  }
}

TEST_CASE("random_assignment_KeepsTheMemoryBudget") {
  const ir::Graph graph = ir::build_mlp({});
  const auto free = lowered(graph, "8", costs::Mode::training);
  auto usage = [](const synth::Lowered& l, const synth::Assignment& a) { return synth::peak_usage(l.problem, a).bytes; };
  // The median peak of 21 free draws: about half of the draws are over it.
  std::vector<int64_t> usages;
  for (uint64_t seed = 0; seed < 21; ++seed) usages.push_back(usage(free, synth::random_assignment(free, seed)));
  std::sort(usages.begin(), usages.end());
  // (The budget also offers recomputation: more nodes and strategies than `free`.)
  const auto tight = lowered(graph, "8", costs::Mode::training, usages[10]);
  for (uint64_t seed = 0; seed < 20; ++seed) CHECK(usage(tight, synth::random_assignment(tight, seed)) <= usages[10]);
  CHECK(usages.front() < usages.back());
}

TEST_CASE("random_assignment_NoPlanNamesTheSeed") {
  const auto l = lowered(ir::build_mlp({}), "8", costs::Mode::training, 1000);
  CHECK_THROWS_WITH_AS(synth::random_assignment(l, 3),
                       "--plan random --seed 3: no legal plan within the memory budget in 1000 draws", ir::InputError);
}

TEST_CASE("random_plan_GoesThroughTheScheduleBuilder") {
  const ir::Graph graph = small_gpt2();
  const auto model = costs::make_cost_model("alpha-beta");
  const ir::Mesh mesh = ir::parse_mesh("2x4");
  const auto result = synth::random_plan(graph, mesh, *model, {}, 11);
  CHECK(result.search.best == synth::random_assignment(result.lowered, 11));
  CHECK(result.search.best_cost == synth::evaluate(result.lowered.problem, result.search.best));
  CHECK_FALSE(result.search.proven_optimal);
  CHECK(synth::assignment_from_schedule(result.lowered, result.schedule) == result.search.best);
  CHECK(ir::to_json(synth::random_plan(graph, mesh, *model, {}, 11).schedule) == ir::to_json(result.schedule));
}

TEST_CASE("shrink_plan_LeavesOnlyTheFailingNodeSharded") {
  const auto l = lowered(small_gpt2(), "2x4");
  const int ids = l.owner.at(*l.graph.find("input_ids"));
  // A draw that shards input_ids and more besides.
  synth::Assignment failing;
  for (uint64_t seed = 0; failing.empty(); ++seed) {
    auto a = synth::random_assignment(l, seed);
    if (a[ids] != synth::replicated_strategy(l, ids) && synth::sharded_nodes(l, a).size() > 3) failing = a;
  }
  // "Fails" while input_ids is sharded, as the int64 gather did before issue 21's fix.
  const auto fails = [&](const synth::Assignment& a) { return a[ids] == failing[ids]; };
  const auto shrunk = synth::shrink_plan(l, failing, fails);
  const auto lines = synth::sharded_nodes(l, shrunk);
  REQUIRE(lines.size() >= 1);
  CHECK(lines.front().rfind("input_ids: ", 0) == 0);
  // Only nodes that cannot be replicated beside it (its consumer reading it sharded) may stay.
  CHECK(lines.size() <= 2);
}

// Found by the random plans (issue 21): a graph output resharded on its way
// out is written as a fwd_post on its producer (its only user), which
// assignment_from_schedule did not read back, so `synth evaluate` rejected
// the schedule that `synth --schedule` had written ("node 'output' has no
// legal strategy with output S0RS1 reading S1RR").
TEST_CASE("assignment_from_schedule_OutputReshardedByItsProducer") {
  const ir::Graph graph = ir::build_mlp({8, 16, 32, 64, ir::DType::float32});
  const auto model = costs::make_cost_model("alpha-beta");
  synth::SynthOptions options;
  options.pins = {synth::parse_pin("fc2=SRR"), synth::parse_pin("output=RRS")};
  const auto result = synth::synthesize(graph, ir::parse_mesh("2"), *model, options);
  bool producer_reshards = false;
  for (const auto& d : result.schedule.directives) {
    producer_reshards = producer_reshards || (d.node == "fc2" && d.mode == "fwd_post" && d.sync_op == "SRR->RRS");
  }
  REQUIRE(producer_reshards);
  CHECK(synth::assignment_from_schedule(result.lowered, result.schedule) == result.search.best);
  const auto scored = synth::evaluate_schedule(graph, ir::parse_mesh("2"), *model, {}, result.schedule);
  CHECK(scored.search.best_cost == result.search.best_cost);
}
