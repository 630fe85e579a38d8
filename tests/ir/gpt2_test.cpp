#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/error.hpp"
#include "ir/gpt2.hpp"
#include "ir/graph_table.hpp"
#include "ir/mesh.hpp"
#include "ir/op_sharding.hpp"
#include "ir/op_table.hpp"

using namespace shardsynth::ir;

namespace {

using Shape = std::vector<int64_t>;

const SpecSpace kBlocked{-1, false, true};

Gpt2Config small_with_layers(int64_t n_layer) {
  Gpt2Config c = gpt2_preset("small");
  c.n_layer = n_layer;
  return c;
}

// Full name -> stored shape of every parameter that has storage of its own.
std::map<std::string, Shape> own_params(const Graph& g) {
  std::map<std::string, Shape> out;
  for (Vertex v : g.topological_order()) {
    for (const Param& p : g.node(v).params) {
      if (!p.tied_to.empty()) continue;
      const bool fresh = out.emplace(g.node(v).name + "." + p.name, p.type.shape).second;
      CHECK_MESSAGE(fresh, "duplicate parameter " << g.node(v).name << "." << p.name);
    }
  }
  return out;
}

std::string rule_text(const Graph& g, const std::string& node) { return to_string(rule_for(g, *g.find(node))); }

// "operands -> result" for each sharding on a 1-D mesh, e.g. "RRR,RS(3),S(3)->RRS(3)".
std::set<std::string> texts(const std::vector<OpSharding>& shardings) {
  std::set<std::string> out;
  for (const auto& s : shardings) {
    std::string text;
    for (const auto& spec : s.operands) text += (text.empty() ? "" : ",") + to_string(spec);
    out.insert(text + "->" + to_string(s.result));
  }
  return out;
}

std::set<std::string> shardings_of(const Graph& g, const std::string& node, const std::string& mesh) {
  return texts(enumerate_op_shardings(rule_for(g, *g.find(node)), parse_mesh(mesh), kBlocked));
}

}  // namespace

TEST_CASE("build_gpt2_HuggingFaceParamNamesAndShapes") {
  const Graph g = build_gpt2(small_with_layers(1));
  const std::map<std::string, Shape> expected{
      {"wte.weight", {50257, 768}},
      {"wpe.weight", {1024, 768}},
      {"h.0.ln_1.weight", {768}},
      {"h.0.ln_1.bias", {768}},
      {"h.0.attn.c_attn.weight", {768, 2304}},
      {"h.0.attn.c_attn.bias", {2304}},
      {"h.0.attn.c_proj.weight", {768, 768}},
      {"h.0.attn.c_proj.bias", {768}},
      {"h.0.ln_2.weight", {768}},
      {"h.0.ln_2.bias", {768}},
      {"h.0.mlp.c_fc.weight", {768, 3072}},
      {"h.0.mlp.c_fc.bias", {3072}},
      {"h.0.mlp.c_proj.weight", {3072, 768}},
      {"h.0.mlp.c_proj.bias", {768}},
      {"ln_f.weight", {768}},
      {"ln_f.bias", {768}},
  };
  CHECK(own_params(g) == expected);
  // The LM head's only parameter is wte's weight under another name.
  const Node& head = g.node(*g.find("lm_head"));
  REQUIRE(head.params.size() == 1);
  CHECK(head.params[0].name == "weight");
  CHECK(head.params[0].tied_to == "wte.weight");
  CHECK(head.params[0].type.shape == Shape{50257, 768});
}

TEST_CASE("build_gpt2_SmallParamCount") {
  int64_t count = 0;
  for (const auto& [name, shape] : own_params(build_gpt2(gpt2_preset("small")))) count += num_elements(shape);
  CHECK(count == 124439808);
}

TEST_CASE("build_gpt2_GraphShapeAndWiring") {
  const Graph g = build_gpt2(small_with_layers(2));
  CHECK(g.size() == 9 + 2 * 29);  // boundary, embeddings, ln_f, lm_head; 29 nodes per block
  auto shape = [&](const std::string& name) { return g.node(*g.find(name)).type.shape; };
  auto inputs = [&](const std::string& name) {
    std::vector<std::string> names;
    for (Vertex v : g.inputs_of(*g.find(name))) names.push_back(g.node(v).name);
    return names;
  };
  CHECK(g.node(*g.find("input_ids")).type.dtype == DType::int64);
  CHECK(shape("position_ids") == Shape{1, 1024});
  CHECK(shape("wpe") == Shape{1, 1024, 768});
  CHECK(inputs("add") == std::vector<std::string>{"wte", "wpe"});
  CHECK(inputs("h.0.ln_1") == std::vector<std::string>{"drop"});
  CHECK(inputs("h.1.ln_1") == std::vector<std::string>{"h.0.residual_2"});
  CHECK(inputs("h.1.residual_1") == std::vector<std::string>{"h.0.residual_2", "h.1.attn.resid_dropout"});
  CHECK(inputs("h.0.attn.scores") == std::vector<std::string>{"h.0.attn.query_heads", "h.0.attn.key_t"});
  CHECK(inputs("h.0.attn.context") == std::vector<std::string>{"h.0.attn.attn_dropout", "h.0.attn.value_heads"});
  CHECK(shape("h.0.attn.key_t") == Shape{8, 12, 64, 1024});
  CHECK(shape("h.0.attn.scores") == Shape{8, 12, 1024, 1024});
  CHECK(shape("h.0.attn.merge") == Shape{8, 1024, 12, 64});
  CHECK(g.node(*g.find("h.0.attn.key")).attrs.at("index") == std::vector<int64_t>{1});
  CHECK(g.node(*g.find("h.0.attn.scale")).real_attrs.at("divisor") == doctest::Approx(8.0));
  CHECK(inputs("ln_f") == std::vector<std::string>{"h.1.residual_2"});
  CHECK(shape("output") == Shape{8, 1024, 50257});
  CHECK(inputs("output") == std::vector<std::string>{"lm_head"});
}

TEST_CASE("rule_for_EveryGpt2NodeHasARule") {
  const Graph g = build_gpt2(small_with_layers(2));
  int ops = 0;
  for (Vertex v : g.topological_order()) {
    if (is_boundary(g.node(v).kind)) continue;
    CHECK_NOTHROW_MESSAGE(rule_for(g, v), g.node(v).name);
    ++ops;
  }
  CHECK(ops == 6 + 2 * 29);
}

TEST_CASE("rule_for_Gpt2FusedQkvIsGroupedByThree") {
  const Graph g = build_gpt2(small_with_layers(1));
  CHECK(rule_text(g, "h.0.attn.c_attn") ==
        "([e0, e1, k], [k, g*n], [g*n])->([e0, e1, g*n]) {e0=8, e1=1024, k=768, g=3, n=768} reduction={k}");
  CHECK(rule_text(g, "h.0.mlp.c_fc") ==
        "([e0, e1, k], [k, n], [n])->([e0, e1, n]) {e0=8, e1=1024, k=768, n=3072} reduction={k}");
  CHECK(rule_text(g, "h.0.attn.query") ==
        "([e0, e1, q*n])->([e0, e1, n]) {e0=8, e1=1024, q=3, n=768} needs_replication={q}");
  // Forward flops: a multiply-add per point of [b, s, in, out].
  const Vertex c_attn = *g.find("h.0.attn.c_attn");
  CHECK(forward_flops(g, c_attn, rule_for(g, c_attn)) == doctest::Approx(2.0 * 8 * 1024 * 768 * 2304));
}

TEST_CASE("rule_for_EmbeddingVocabIsReduction") {
  const Graph g = build_gpt2(small_with_layers(1));
  CHECK(rule_text(g, "wte") == "([e0, e1], [v, d])->([e0, e1, d]) {e0=8, e1=1024, v=50257, d=768} reduction={v}");
  CHECK(rule_text(g, "wpe") == "([e0, e1], [v, d])->([e0, e1, d]) {e0=1, e1=1024, v=1024, d=768} reduction={v}");
  // A lookup is one copy per output element: the vocab is not iterated.
  const Vertex wte = *g.find("wte");
  CHECK(forward_flops(g, wte, rule_for(g, wte)) == doctest::Approx(8.0 * 1024 * 768));
  // GPT-2's vocab, 50257, is odd: no vocab-parallel embedding on 4 devices.
  CHECK(shardings_of(g, "wte", "4") ==
        std::set<std::string>{"RR,RR->RRR", "SR,RR->SRR", "RS,RR->RSR", "RR,RS->RRS"});
  // Padded to 50304 (as Megatron-LM does) each device looks up its rows and leaves a partial sum.
  Gpt2Config padded = small_with_layers(1);
  padded.vocab = 50304;
  CHECK(shardings_of(build_gpt2(padded), "wte", "4").count("RR,SR->RRR+P"));
  CHECK(shardings_of(g, "add", "4").count("RRS,RRS->RRS"));
}

TEST_CASE("enumerate_op_shardings_Gpt2CAttnShardsHeadsAsBlocks") {
  const Graph g = build_gpt2(small_with_layers(1));
  // n (features within each of q, k, v) sharded, g unsharded: blocked S(3).
  // g itself (3) does not divide by 4, so no contiguous shard of 3e exists.
  CHECK(shardings_of(g, "h.0.attn.c_attn", "4") == std::set<std::string>{
                                                       "RRR,RR,R->RRR",
                                                       "SRR,RR,R->SRR",
                                                       "RSR,RR,R->RSR",
                                                       "RRS,SR,R->RRR+P",
                                                       "RRR,RS(3),S(3)->RRS(3)",
                                                   });
  // On 3 devices g can be sharded: q, k and v on different devices, a plain RRS.
  CHECK(shardings_of(g, "h.0.attn.c_attn", "3").count("RRR,RS,S->RRS"));
}

TEST_CASE("enumerate_op_shardings_Gpt2SplitConsumesBlockedHeads") {
  const Graph g = build_gpt2(small_with_layers(1));
  // Sharding heads, the split takes c_attn's blocked RRS(3) and returns a plain RRS.
  const auto split = shardings_of(g, "h.0.attn.query", "4");
  CHECK(split == std::set<std::string>{"RRR->RRR", "SRR->SRR", "RSR->RSR", "RRS(3)->RRS"});
  // A plain RRS (what c_attn gives on 3 devices) is never consumed: it holds whole q, k or v.
  for (const auto& text : split) CHECK(text.rfind("RRS->", 0) == std::string::npos);
  // Same rule for every part.
  CHECK(shardings_of(g, "h.0.attn.value", "4") == split);
  // Downstream the head shard is a plain shard of the heads dim.
  CHECK(shardings_of(g, "h.0.attn.query_view", "4").count("RRS->RRSR"));
  CHECK(shardings_of(g, "h.0.attn.query_heads", "4").count("RRSR->RSRR"));
  CHECK(shardings_of(g, "h.0.attn.merge_view", "4").count("RRSR->RRS"));
  CHECK(shardings_of(g, "h.0.attn.c_proj", "4").count("RRS,SR,R->RRR+P"));
}

TEST_CASE("rule_for_SplitAndConv1dRejectBadAttrs") {
  Gpt2Config c = small_with_layers(1);
  c.seq = 8;
  Graph g = build_gpt2(c);
  Node& query = g.node(*g.find("h.0.attn.query"));
  const auto good = query.attrs;
  query.attrs["dim"] = {1};
  CHECK_THROWS_WITH_AS(rule_text(g, "h.0.attn.query"), doctest::Contains("'h.0.attn.query'"), InputError);
  query.attrs = good;
  query.attrs["sections"] = {5};
  CHECK_THROWS_WITH_AS(rule_text(g, "h.0.attn.query"), doctest::Contains("'h.0.attn.query'"), InputError);
  query.attrs = good;
  query.attrs["index"] = {3};
  CHECK_THROWS_WITH_AS(rule_text(g, "h.0.attn.query"), doctest::Contains("'h.0.attn.query'"), InputError);
  query.attrs = good;
  query.attrs.erase("index");
  CHECK_THROWS_WITH_AS(rule_text(g, "h.0.attn.query"), doctest::Contains("'h.0.attn.query'"), InputError);
  query.attrs = good;
  query.attrs["sections"] = {2};  // divides 2304, but the result is not half of it
  CHECK_THROWS_WITH_AS(rule_text(g, "h.0.attn.query"), doctest::Contains("'h.0.attn.query'"), InputError);
  query.attrs = good;
  CHECK_NOTHROW(rule_text(g, "h.0.attn.query"));
  Node& c_attn = g.node(*g.find("h.0.attn.c_attn"));
  c_attn.attrs["groups"] = {0};
  CHECK_THROWS_WITH_AS(rule_text(g, "h.0.attn.c_attn"), doctest::Contains("'h.0.attn.c_attn'"), InputError);
  c_attn.attrs["groups"] = {5};  // 2304 does not split into 5 groups
  CHECK_THROWS_WITH_AS(rule_text(g, "h.0.attn.c_attn"), doctest::Contains("'h.0.attn.c_attn'"), InputError);
}

TEST_CASE("gpt2_preset_SizesOfTheFourModels") {
  CHECK(gpt2_preset("medium").n_layer == 24);
  CHECK(gpt2_preset("large").n_head == 20);
  const Gpt2Config xl = gpt2_preset("xl");
  CHECK((xl.n_layer == 48 && xl.n_head == 25 && xl.n_embd == 1600 && xl.seq == 1024 && xl.batch == 8));
  CHECK((xl.vocab == 50257 && xl.n_positions == 1024));
}

TEST_CASE("gpt2_preset_UnknownNameIsInputError") {
  CHECK_THROWS_WITH_AS(gpt2_preset("tiny"), doctest::Contains("'tiny'"), InputError);
}

TEST_CASE("build_gpt2_RejectsHeadsNotDividingEmbd") {
  Gpt2Config c = small_with_layers(1);
  c.n_head = 5;
  CHECK_THROWS_WITH_AS(build_gpt2(c), doctest::Contains("n_head"), InputError);
  c = small_with_layers(1);
  c.seq = 2048;
  CHECK_THROWS_WITH_AS(build_gpt2(c), doctest::Contains("n_positions"), InputError);
  c = small_with_layers(0);
  CHECK_THROWS_WITH_AS(build_gpt2(c), doctest::Contains("n_layer"), InputError);
  c = small_with_layers(1);
  c.n_positions = c.seq = c.vocab = int64_t{1} << 40;
  CHECK_THROWS_AS(build_gpt2(c), InputError);
}

TEST_CASE("format_graph_table_Gpt2ListsModules") {
  const std::string table = format_graph_table(build_gpt2(small_with_layers(1)));
  CHECK(table.find("h.0.attn.c_attn") != std::string::npos);
  CHECK(table.find("transformers.pytorch_utils.Conv1D") != std::string::npos);
  CHECK(table.find("NewGELUActivation") != std::string::npos);
}
