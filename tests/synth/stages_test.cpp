// The pipeline stage planner: DP against brute force, cost against
// fairscale's rule, input errors, memory budget, cached ranges.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/gpt2.hpp"
#include "ir/mesh.hpp"
#include "ir/staged_schedule.hpp"
#include "synth/lowering.hpp"
#include "synth/solver/problem.hpp"
#include "synth/stages/stage_cuts.hpp"
#include "synth/stages/stage_range.hpp"
#include "synth/stages/stages.hpp"
#include "synth/synthesizer.hpp"

using namespace shardsynth;

namespace {

ir::Gpt2Config tiny_gpt2(int layers, int64_t vocab) {
  ir::Gpt2Config c;
  c.n_layer = layers;
  c.n_head = 2;
  c.n_embd = 32;
  c.vocab = vocab;
  c.seq = 8;
  c.batch = 2;
  return c;
}

// Blocks with enough compute to matter next to transfers, on a mesh whose
// axis-0 links are nearly free, so stage times follow the layers' compute.
ir::Gpt2Config compute_gpt2(int layers, int64_t vocab) {
  ir::Gpt2Config c;
  c.n_layer = layers;
  c.n_head = 4;
  c.n_embd = 256;
  c.vocab = vocab;
  c.seq = 64;
  c.batch = 4;
  return c;
}

ir::Mesh fast_links(const std::string& text) {
  auto mesh = ir::parse_mesh(text);
  ir::set_links(mesh, "100000,200", "0.001,1");
  return mesh;
}

int64_t stage_time(const ir::Stage& s) { return s.compute + s.communication; }

int64_t sum_of_times(const ir::StagedSchedule& s) {
  int64_t sum = 0;
  for (const auto& stage : s.stages) sum += stage_time(stage);
  return sum;
}

// Every way to choose `k` of `items`, ascending.
void choose(const std::vector<int>& items, int k, std::size_t from, std::vector<int>& picked,
            std::vector<std::vector<int>>& out) {
  if (static_cast<int>(picked.size()) == k) {
    out.push_back(picked);
    return;
  }
  for (std::size_t i = from; i < items.size(); ++i) {
    picked.push_back(items[i]);
    choose(items, k, i + 1, picked, out);
    picked.pop_back();
  }
}

void check_dp_against_brute_force(const ir::Graph& graph, const ir::Mesh& mesh, const std::string& model_name,
                                  int stages) {
  const auto model = costs::make_cost_model(model_name);
  const synth::StageOptions so{stages, synth::StageBalance::cost, 1};
  const auto plan = synth::plan_stage_layout(graph, mesh, *model, {}, so);
  REQUIRE(plan.candidates.size() >= static_cast<std::size_t>(stages - 1));
  std::vector<std::vector<int>> placements;
  std::vector<int> picked;
  choose(plan.candidates, stages - 1, 0, picked, placements);
  std::tuple<int64_t, int64_t> best{synth::kForbidden, synth::kForbidden};
  for (const auto& cuts : placements) {
    const auto other = synth::plan_with_cuts(graph, mesh, *model, {}, so, cuts);
    best = std::min(best, std::tuple<int64_t, int64_t>{other.schedule.bottleneck, sum_of_times(other.schedule)});
  }
  CAPTURE(placements.size());
  CHECK(placements.size() > 1);
  CHECK(plan.schedule.bottleneck == std::get<0>(best));
  CHECK(sum_of_times(plan.schedule) == std::get<1>(best));
  CHECK(plan.pipeline_time == std::get<1>(best));  // one micro-batch: the pipeline time is the sum
}

}  // namespace

TEST_CASE("plan_stages_DpEqualsBruteForce") {
  SUBCASE("gpt2 on 3x2, alpha-beta") {
    check_dp_against_brute_force(ir::build_gpt2(tiny_gpt2(2, 256)), ir::parse_mesh("3x2"), "alpha-beta", 3);
  }
  SUBCASE("compute-bound gpt2 with a large head on 3x2, alpha-beta") {
    check_dp_against_brute_force(ir::build_gpt2(compute_gpt2(3, 8192)), fast_links("3x2"), "alpha-beta", 3);
  }
  SUBCASE("gpt2 on 4x1, alpha-beta") {
    check_dp_against_brute_force(ir::build_gpt2(compute_gpt2(2, 512)), fast_links("4x1"), "alpha-beta", 4);
  }
  SUBCASE("gpt2 on 2x2, slapo") {
    check_dp_against_brute_force(ir::build_gpt2(tiny_gpt2(3, 256)), ir::parse_mesh("2x2"), "slapo", 2);
  }
}

TEST_CASE("plan_stages_CostNeverWorseThanParams") {
  // Sizes where fairscale's rule gives exactly the stages asked for.
  const std::vector<std::tuple<int, int, int64_t>> cases{{2, 2, 512}, {2, 3, 512}, {2, 4, 8192}, {3, 2, 8192}, {3, 3, 8192}};
  for (const auto& [stages, layers, vocab] : cases) {
    const ir::Graph graph = ir::build_gpt2(compute_gpt2(layers, vocab));
    const auto mesh = fast_links(std::to_string(stages) + "x2");
    const auto model = costs::make_cost_model("alpha-beta");
    const auto params = synth::plan_stages(graph, mesh, *model, {}, {stages, synth::StageBalance::params, 1});
    const auto cost = synth::plan_stages(graph, mesh, *model, {}, {stages, synth::StageBalance::cost, 1});
    // clang 14 cannot capture a structured binding in doctest's CAPTURE lambda: a named copy.
    const auto layer_count = layers;
    CAPTURE(layer_count);
    const auto stage_count = stages;
    CAPTURE(stage_count);
    const auto vocab_size = vocab;
    CAPTURE(vocab_size);
    CHECK(params.balance == "params");
    CHECK(cost.balance == "cost");
    CHECK(cost.bottleneck <= params.bottleneck);
  }
}

TEST_CASE("plan_stages_CostBeatsParamsWithLargeLmHead") {
  // A vocabulary of 8192 on 256-wide blocks: lm_head outweighs a block in
  // compute, while fairscale's rule balances parameters (and counts the tied
  // head weight twice).
  const ir::Graph graph = ir::build_gpt2(compute_gpt2(3, 8192));
  const auto mesh = fast_links("2x2");
  const auto model = costs::make_cost_model("alpha-beta");
  const auto params = synth::plan_stages(graph, mesh, *model, {}, {2, synth::StageBalance::params, 1});
  const auto cost = synth::plan_stages(graph, mesh, *model, {}, {2, synth::StageBalance::cost, 1});
  CHECK(cost.bottleneck < params.bottleneck);
  CHECK(cost.stages[0].nodes != params.stages[0].nodes);
}

TEST_CASE("plan_stages_RejectsBadInput") {
  const ir::Graph small = ir::build_gpt2(ir::gpt2_preset("small"));
  const auto model = costs::make_cost_model("alpha-beta");
  auto message = [&](const ir::Graph& g, const std::string& mesh, synth::StageOptions so) -> std::string {
    try {
      synth::plan_stages(g, ir::parse_mesh(mesh), *model, {}, so);
    } catch (const ir::InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message(small, "8", {4, synth::StageBalance::cost, 1}).find("got mesh 8") != std::string::npos);
  CHECK(message(small, "2x4", {4, synth::StageBalance::cost, 1}).find("got mesh 2x4") != std::string::npos);
  const std::string fairscale = message(small, "4x2", {4, synth::StageBalance::params, 1});
  CHECK(fairscale.find("3 non-empty stages") != std::string::npos);
  CHECK(fairscale.find("--stage-balance cost") != std::string::npos);
  const ir::Graph one_layer = ir::build_gpt2(tiny_gpt2(1, 64));
  CHECK(message(one_layer, "8x1", {8, synth::StageBalance::cost, 1}).find("fewer than --stages 8") != std::string::npos);
  CHECK(message(one_layer, "2x1", {2, synth::StageBalance::cost, 0}).find("--micro-batches 0") != std::string::npos);
  synth::SynthOptions pinned;
  pinned.pins.push_back({"wte", "RRR", synth::PinKind::fix});
  CHECK_THROWS_AS(synth::plan_stages(one_layer, ir::parse_mesh("2x1"), *model, pinned, {2, synth::StageBalance::cost, 1}),
                  ir::InputError);
}

TEST_CASE("plan_stages_MemoryBudgetBoundsEveryStage") {
  // One device per group: every range has a single plan, so its memory is
  // fixed and the budget only moves the cuts.
  const ir::Graph graph = ir::build_gpt2(tiny_gpt2(3, 4096));
  const auto mesh = ir::parse_mesh("3x1");
  const auto model = costs::make_cost_model("alpha-beta");
  const auto free = synth::plan_stage_layout(graph, mesh, *model, {}, {3, synth::StageBalance::cost, 1});
  int64_t largest = 0;
  for (const auto& s : free.schedule.stages) largest = std::max(largest, s.memory);
  synth::SynthOptions tight;
  tight.lower.memory_budget = largest - 1;  // the unconstrained plan no longer fits
  const auto plan = synth::plan_stage_layout(graph, mesh, *model, tight, {3, synth::StageBalance::cost, 1});
  for (const auto& s : plan.schedule.stages) CHECK(s.memory <= largest - 1);
  CHECK(plan.cuts != free.cuts);
  CHECK(plan.schedule.bottleneck >= free.schedule.bottleneck);
  synth::SynthOptions none;
  none.lower.memory_budget = 1024;
  CHECK_THROWS_WITH_AS(synth::plan_stages(graph, mesh, *model, none, {3, synth::StageBalance::cost, 1}),
                       doctest::Contains("memory budget"), ir::InputError);
}

TEST_CASE("plan_stages_StageMemoryIsItsStepsPeakNotTheAllLiveSum") {
  // One device per group, so each node of a stage has a single usage;
  // stages balanced by parameters, so the middle one holds blocks only. A
  // stage frees an activation after its last read: its memory is the peak
  // over its step, below the sum of all its usages where anything dies
  // early, and a budget of exactly the largest peak still fits.
  const ir::Graph graph = ir::build_gpt2(tiny_gpt2(6, 256));
  const auto mesh = ir::parse_mesh("3x1");
  const auto model = costs::make_cost_model("alpha-beta");
  const auto free = synth::plan_stage_layout(graph, mesh, *model, {}, {3, synth::StageBalance::params, 1});
  REQUIRE(free.schedule.stages.size() == 3);
  int checked = 0;
  for (const ir::Stage& stage : free.schedule.stages) {
    const ir::Graph sub = ir::stage_graph(graph, stage.nodes);
    bool ties = false;  // a stage holding either end of the tied embedding counts it differently: skip it
    for (ir::Vertex v = 0; v < sub.size(); ++v) {
      for (const auto& p : sub.node(v).params) ties = ties || !p.tied_to.empty() || sub.node(v).name == "wte";
    }
    if (ties) continue;
    const synth::Lowered lowered = synth::lower(sub, ir::parse_mesh("1"), *model);
    int64_t all_live = 0;
    for (const auto& node : lowered.problem.nodes) all_live += *std::min_element(node.usages.begin(), node.usages.end());
    CHECK(stage.memory == synth::least_peak(lowered.problem).bytes);
    CHECK(stage.memory < all_live);
    ++checked;
  }
  CHECK(checked > 0);
  int64_t largest = 0;
  for (const auto& s : free.schedule.stages) largest = std::max(largest, s.memory);
  synth::SynthOptions exact;
  exact.lower.memory_budget = largest;
  const auto plan = synth::plan_stage_layout(graph, mesh, *model, exact, {3, synth::StageBalance::params, 1});
  CHECK(plan.cuts == free.cuts);
}

TEST_CASE("plan_stages_StagesPartitionTheGraphAndListEveryCrossingTensor") {
  const ir::Graph graph = ir::build_gpt2(tiny_gpt2(4, 256));
  const auto mesh = ir::parse_mesh("3x2");
  const auto model = costs::make_cost_model("alpha-beta");
  const auto s = synth::plan_stages(graph, mesh, *model, {}, {3, synth::StageBalance::cost, 2});
  REQUIRE(s.stages.size() == 3);
  std::map<std::string, int> stage_of;
  std::vector<std::string> all;
  for (const auto& stage : s.stages) {
    CHECK(!stage.nodes.empty());
    for (const auto& n : stage.nodes) stage_of[n] = stage.index;
    all.insert(all.end(), stage.nodes.begin(), stage.nodes.end());
  }
  std::vector<std::string> expected;
  for (ir::Vertex v : synth::program_order(graph)) expected.push_back(graph.node(v).name);
  CHECK(all == expected);
  std::set<std::tuple<std::string, int, int>> crossing;
  for (ir::Vertex v = 0; v < graph.size(); ++v) {
    for (ir::Vertex u : graph.inputs_of(v)) {
      const int from = stage_of.at(graph.node(u).name), to = stage_of.at(graph.node(v).name);
      CHECK(from <= to);
      if (from < to) crossing.insert({graph.node(u).name, from, to});
    }
  }
  std::set<std::tuple<std::string, int, int>> listed;
  for (const auto& t : s.transfers) {
    listed.insert({t.tensor, t.from_stage, t.to_stage});
    CHECK(t.bytes > 0);
    CHECK(t.cost > 0);
    CHECK(t.spec == "RRR");  // tensors cross cuts replicated
  }
  CHECK(listed == crossing);
  CHECK(s.micro_batches == 2);
  CHECK(s.mesh == std::vector<int64_t>{3, 2});
  CHECK(ir::staged_schedule_from_json(ir::to_json(s)) == s);
}

TEST_CASE("plan_stages_SingleStageIsTheWholeGraphOnTheSubMesh") {
  const ir::Graph graph = ir::build_gpt2(tiny_gpt2(2, 256));
  const auto model = costs::make_cost_model("alpha-beta");
  const auto s = synth::plan_stages(graph, ir::parse_mesh("1x2"), *model, {}, {1, synth::StageBalance::cost, 1});
  REQUIRE(s.stages.size() == 1);
  CHECK(s.transfers.empty());
  const auto whole = synth::synthesize(graph, ir::parse_mesh("2"), *model);
  CHECK(s.stages[0].schedule.cost == whole.search.best_cost);
  CHECK(s.bottleneck == whole.search.best_cost);
}

TEST_CASE("RangeSolver_IdenticalBlocksSolveOnceAndRename") {
  const ir::Graph graph = ir::build_gpt2(tiny_gpt2(4, 256));
  const auto mesh = ir::parse_mesh("2x2");
  const auto model = costs::make_cost_model("alpha-beta");
  const auto order = synth::program_order(graph);
  const auto cuts = synth::candidate_cuts(graph, order).positions;
  // cuts: drop, h.0.ln_1, h.0.ln_2, h.1.ln_1, ...: block 1 is [cuts[3], cuts[5]), block 2 [cuts[5], cuts[7]).
  REQUIRE(cuts.size() >= 8);
  synth::RangeSolver warm(graph, order, mesh, *model, {});
  const auto& first = warm.solve(cuts[3], cuts[5]);
  const auto& second = warm.solve(cuts[5], cuts[7]);
  CHECK(&first == &second);
  CHECK(warm.stats().solved == 1);
  CHECK(warm.stats().reused == 1);
  synth::RangeSolver cold(graph, order, mesh, *model, {});
  const auto& fresh = cold.solve(cuts[5], cuts[7]);
  CHECK(fresh.intra == second.intra);
  CHECK(fresh.memory == second.memory);
  const ir::Schedule renamed = warm.schedule_for(cuts[5], cuts[7]);
  CHECK(renamed.cost == fresh.schedule.cost);
  CHECK(renamed.specs.size() == fresh.schedule.specs.size());
  std::set<std::string> fresh_names, renamed_names;
  for (const auto& t : fresh.schedule.specs) fresh_names.insert(t.tensor);
  for (const auto& t : renamed.specs) renamed_names.insert(t.tensor);
  CHECK(renamed_names == fresh_names);  // block 2's names, none of block 1's
  CHECK(renamed_names.count("h.2.attn.c_attn.weight") == 1);
  CHECK(renamed_names.count("h.1.attn.c_attn.weight") == 0);
}
