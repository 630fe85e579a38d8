// Candidate cut points and fairscale's parameter-count rule.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"
#include "ir/gpt2.hpp"
#include "ir/graph.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"
#include "synth/stages/stage_cuts.hpp"

using namespace shardsynth;

namespace {

ir::TensorType f32(std::vector<int64_t> shape) { return {std::move(shape), ir::DType::float32}; }

// A linear layer named `name` with an [out, in] weight of in * out parameters.
void linear(ir::Graph& g, const std::string& name, const std::string& input, int64_t in, int64_t out) {
  g.add_node(ir::Node{name, "linear", "", f32({2, out}), {ir::Param{"weight", f32({out, in}), ""}}, {}, {}}, {input});
}

void op(ir::Graph& g, const std::string& name, const std::string& kind, const std::vector<std::string>& inputs, int64_t width) {
  g.add_node(ir::Node{name, kind, "", f32({2, width}), {}, {}, {}}, inputs);
}

std::map<std::string, int> shards_by_name(const ir::Graph& g, int count) {
  const auto order = synth::program_order(g);
  const auto shards = synth::fairscale_shards(g, order, count);
  std::map<std::string, int> out;
  for (std::size_t i = 0; i < order.size(); ++i) out[g.node(order[i]).name] = shards[i];
  return out;
}

// The Python reference's shard ids (keyed by fx name) for `g`.
std::map<std::string, int> reference_shards(const ir::Graph& g, int count) {
  nlohmann::json nodes = nlohmann::json::array();
  for (ir::Vertex v : synth::program_order(g)) {
    const ir::Node& node = g.node(v);
    nlohmann::json args = nlohmann::json::array();
    for (ir::Vertex u : g.inputs_of(v)) args.push_back(g.node(u).name);
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : node.params) {
      params.push_back({{"name", p.name}, {"numel", ir::num_elements(p.type.shape)}, {"tied_to", p.tied_to}});
    }
    const std::string op = node.kind == ir::kPlaceholder ? "placeholder"
                           : node.kind == ir::kOutput    ? "output"
                           : node.params.empty()         ? "call_function"
                                                         : "call_module";
    nodes.push_back({{"name", node.name}, {"op", op}, {"args", args}, {"params", params}});
  }
  const auto dir = testing::scratch_dir("fairscale_ref");
  const auto path = dir / "graph.json";
  std::ofstream(path) << nlohmann::json{{"shard_count", count}, {"nodes", nodes}}.dump();
  const auto r = testing::run_command(std::string(SHARDSYNTH_PYTHON_EXE) + " " + std::string(SHARDSYNTH_SYNTH_TESTS_DIR) +
                                      "/fairscale_reference.py " + path.string());
  std::filesystem::remove_all(dir);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out).get<std::map<std::string, int>>();
}

// C++ shards keyed by fx name, outputs left out, to compare with the reference.
std::map<std::string, int> fx_keyed(const std::map<std::string, int>& shards) {
  std::map<std::string, int> out;
  for (const auto& [name, shard] : shards) {
    if (shard < 0) continue;
    std::string fx = name;
    std::replace(fx.begin(), fx.end(), '.', '_');
    out[fx] = shard;
  }
  return out;
}

}  // namespace

TEST_CASE("fairscale_shards_ShardClosesAfterTheNodeThatGoesOverBudget") {
  ir::Graph g;
  g.add_node(ir::placeholder("x", f32({2, 10})));
  linear(g, "fc1", "x", 10, 1);   // 10 params
  linear(g, "fc2", "fc1", 1, 10);  // 10
  linear(g, "fc3", "fc2", 10, 1);  // 10
  linear(g, "fc4", "fc3", 1, 10);  // 10; budget 40 // 2 = 20
  g.add_node(ir::Node{"output", "output", "", f32({2, 10}), {}, {}, {}}, {"fc4"});
  const auto s = shards_by_name(g, 2);
  // fc2 brings shard 0 to exactly 20 (not over), fc3 takes it over: fc4 starts shard 1.
  CHECK(s == std::map<std::string, int>{{"x", 0}, {"fc1", 0}, {"fc2", 0}, {"fc3", 0}, {"fc4", 1}, {"output", -1}});
  CHECK(synth::shard_starts(synth::fairscale_shards(g, synth::program_order(g), 2)) == std::vector<int>{4});
  CHECK(fx_keyed(s) == reference_shards(g, 2));
}

TEST_CASE("fairscale_shards_SkipConnectionPullsNodesBack") {
  ir::Graph g;
  g.add_node(ir::placeholder("x", f32({2, 6})));
  linear(g, "big", "x", 6, 5);    // 30 params: over the budget 44 // 2 = 22 at once
  linear(g, "small", "big", 5, 2);  // 10
  op(g, "join", "add", {"big", "small"}, 2);  // reads `big` (shard 0) past `small`: both pulled back
  linear(g, "tail", "join", 2, 2);  // 4
  g.add_node(ir::Node{"output", "output", "", f32({2, 2}), {}, {}, {}}, {"tail"});
  const auto s = shards_by_name(g, 2);
  CHECK(s.at("small") == 0);
  CHECK(s.at("join") == 0);
  CHECK(s.at("tail") == 1);
  CHECK(fx_keyed(s) == reference_shards(g, 2));
}

TEST_CASE("fairscale_shards_NameBeforeFirstUnderscoreChargesTheWholeModule") {
  // "blk.act" is no module; fx calls it blk_act and fairscale charges it the
  // module "blk" (all 40 parameters of the block), closing shard 0 early.
  ir::Graph g;
  g.add_node(ir::placeholder("x", f32({2, 4})));
  linear(g, "blk.fc1", "x", 4, 5);     // 20
  op(g, "blk.act", "gelu", {"blk.fc1"}, 5);
  linear(g, "blk.fc2", "blk.act", 5, 4);  // 20
  linear(g, "head", "blk.fc2", 4, 10);    // 40; total 80, budget 80 // 2 = 40
  g.add_node(ir::Node{"output", "output", "", f32({2, 10}), {}, {}, {}}, {"head"});
  const auto s = shards_by_name(g, 2);
  CHECK(s.at("blk.fc1") == 0);
  CHECK(s.at("blk.act") == 0);  // 20 + 40 > 40: the shard closes after it
  CHECK(s.at("blk.fc2") == 1);
  CHECK(s.at("head") == 1);
  CHECK(fx_keyed(s) == reference_shards(g, 2));
}

TEST_CASE("fairscale_shards_TiedWeightCountsInBothModules") {
  // emb and head share one [8, 4] weight: the total counts it once (32 + 8
  // = 40, budget 20) but each module counts it in full, so head alone takes
  // shard 1 over the budget too.
  ir::Graph g;
  g.add_node(ir::placeholder("ids", {{2}, ir::DType::int64}));
  g.add_node(ir::Node{"emb", "embedding", "", f32({2, 4}), {ir::Param{"weight", f32({8, 4}), ""}}, {}, {}}, {"ids"});
  linear(g, "mid", "emb", 4, 2);  // 8
  g.add_node(ir::Node{"head", "linear", "", f32({2, 8}), {ir::Param{"weight", f32({8, 4}), "emb.weight"}}, {}, {}},
             {"mid"});
  g.add_node(ir::Node{"output", "output", "", f32({2, 8}), {}, {}, {}}, {"head"});
  const auto s = shards_by_name(g, 2);
  CHECK(s.at("emb") == 0);
  CHECK(s.at("mid") == 1);
  CHECK(s.at("head") == 1);
  CHECK(fx_keyed(s) == reference_shards(g, 2));
}

TEST_CASE("fairscale_shards_Gpt2SmallAtFourStagesGivesThreeStages") {
  const ir::Graph g = ir::build_gpt2(ir::gpt2_preset("small"));
  const auto s = shards_by_name(g, 4);
  // The tied embedding closes shard 0 at once; every block node is charged
  // the whole "h" list, and the residual adds pull each block back, so all
  // 12 blocks stay in shard 1; ln_f and lm_head make shard 2.
  CHECK(s.at("wte") == 0);
  CHECK(s.at("add") == 0);
  CHECK(s.at("drop") == 1);
  CHECK(s.at("h.11.residual_2") == 1);
  CHECK(s.at("ln_f") == 2);
  CHECK(s.at("lm_head") == 2);
  const auto order = synth::program_order(g);
  CHECK(synth::shard_starts(synth::fairscale_shards(g, order, 4)).size() == 2);
  CHECK(fx_keyed(s) == reference_shards(g, 4));
}

TEST_CASE("fairscale_shards_Gpt2VariantsMatchTheReference") {
  for (int layers : {1, 3, 6}) {
    for (int count : {2, 3, 5}) {
      ir::Gpt2Config c;
      c.n_layer = layers;
      c.n_head = 2;
      c.n_embd = 32;
      c.vocab = 64 + 100 * layers;
      c.seq = 8;
      c.batch = 2;
      const ir::Graph g = ir::build_gpt2(c);
      CAPTURE(layers);
      CAPTURE(count);
      CHECK(fx_keyed(shards_by_name(g, count)) == reference_shards(g, count));
    }
  }
}

TEST_CASE("candidate_cuts_Gpt2CutsBetweenHalfBlocks") {
  ir::Gpt2Config c;
  c.n_layer = 3;
  c.n_head = 2;
  c.n_embd = 32;
  c.vocab = 64;
  c.seq = 8;
  c.batch = 2;
  const ir::Graph g = ir::build_gpt2(c);
  const auto order = synth::program_order(g);
  const auto points = synth::candidate_cuts(g, order);
  CHECK(points.crossing == 1);
  std::vector<std::string> starts;
  for (int p : points.positions) starts.push_back(g.node(order[p]).name);
  // After the embeddings' add, after drop, after every residual add, after ln_f.
  CHECK(starts == std::vector<std::string>{"drop", "h.0.ln_1", "h.0.ln_2", "h.1.ln_1", "h.1.ln_2", "h.2.ln_1",
                                           "h.2.ln_2", "ln_f", "lm_head"});
}

TEST_CASE("candidate_cuts_TensorReadInTwoLaterSegmentsMergesThem") {
  // `a` is read by b and by d: with cuts before b, c and d, it would go to
  // two later stages, so the cut before d is dropped.
  ir::Graph g;
  g.add_node(ir::placeholder("x", f32({2, 4})));
  linear(g, "a", "x", 4, 4);
  linear(g, "b", "a", 4, 4);
  linear(g, "c", "b", 4, 4);
  op(g, "d", "add", {"c", "a"}, 4);
  linear(g, "e", "d", 4, 4);
  g.add_node(ir::Node{"output", "output", "", f32({2, 4}), {}, {}, {}}, {"e"});
  const auto order = synth::program_order(g);
  // Crossing: before b {a}, before c {a, b}, before d {a, c}, before e {d}.
  CHECK(synth::candidate_cuts(g, order).positions == std::vector<int>{2, 5});
  // Extra cuts before c and d would put a's readers b and d in different
  // later segments: the segments between are merged back.
  CHECK(synth::candidate_cuts(g, order, {3, 4}).positions == std::vector<int>{2, 5});
  CHECK(synth::candidate_cuts(g, order, {3}).positions == std::vector<int>{2, 5});
}
