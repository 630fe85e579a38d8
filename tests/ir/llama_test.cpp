#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/error.hpp"
#include "ir/llama.hpp"
#include "ir/mesh.hpp"
#include "ir/op_sharding.hpp"
#include "ir/op_table.hpp"

using namespace shardsynth::ir;

namespace {

using Shape = std::vector<int64_t>;

LlamaConfig preset_with_layers(const char* name, int64_t n_layer) {
  LlamaConfig c = llama_preset(name);
  c.n_layer = n_layer;
  return c;
}

// A small Llama with grouped-query attention: 4 query heads over 2 KV heads, head dim 16.
LlamaConfig small() {
  return {.n_layer = 1, .hidden = 64, .n_head = 4, .n_kv_head = 2, .ffn = 96, .vocab = 256, .seq = 16, .batch = 8};
}

// Full name -> stored shape of every parameter with storage of its own.
std::map<std::string, Shape> own_params(const Graph& g) {
  std::map<std::string, Shape> out;
  for (Vertex v : g.topological_order()) {
    for (const Param& p : g.node(v).params) {
      if (p.tied_to.empty()) out.emplace(g.node(v).name + "." + p.name, p.type.shape);
    }
  }
  return out;
}

int64_t param_count(const Graph& g) {
  int64_t count = 0;
  for (const auto& [name, shape] : own_params(g)) count += num_elements(shape);
  return count;
}

// "operands->result" texts of every sharding of `node` on `mesh`.
std::set<std::string> shardings_of(const Graph& g, const std::string& node, const std::string& mesh) {
  std::set<std::string> out;
  const Mesh m = parse_mesh(mesh);
  for (const auto& s : enumerate_op_shardings(rule_for(g, *g.find(node)), m, {-1, false, true})) {
    std::string text;
    for (const auto& spec : s.operands) text += (text.empty() ? "" : ",") + to_string(spec, m.rank());
    out.insert(text + "->" + to_string(s.result, m.rank()));
  }
  return out;
}

}  // namespace

TEST_CASE("build_llama_HuggingFaceParamNamesAndShapes") {
  const Graph g = build_llama(preset_with_layers("llama-3-8b", 1));
  const std::string l = "model.layers.0.";
  const std::map<std::string, Shape> expected{
      {"model.embed_tokens.weight", {128256, 4096}},
      {l + "input_layernorm.weight", {4096}},
      {l + "self_attn.q_proj.weight", {4096, 4096}},
      {l + "self_attn.k_proj.weight", {1024, 4096}},
      {l + "self_attn.v_proj.weight", {1024, 4096}},
      {l + "self_attn.o_proj.weight", {4096, 4096}},
      {l + "post_attention_layernorm.weight", {4096}},
      {l + "mlp.gate_proj.weight", {14336, 4096}},
      {l + "mlp.up_proj.weight", {14336, 4096}},
      {l + "mlp.down_proj.weight", {4096, 14336}},
      {"model.norm.weight", {4096}},
      {"lm_head.weight", {128256, 4096}},
  };
  CHECK(own_params(g) == expected);
  CHECK(g.node(*g.find(l + "self_attn.k_repeat")).type.shape == Shape{8, 32, 1024, 128});
  CHECK(g.node(*g.find(l + "self_attn.q_rotary")).real_attrs.at("theta") == doctest::Approx(500000));
  CHECK(g.node(*g.find("model.norm")).real_attrs.at("eps") == doctest::Approx(1e-5));
  CHECK(g.node(*g.find("output")).type.shape == Shape{8, 1024, 128256});
}

TEST_CASE("build_llama_PublishedParamCounts") {
  CHECK(param_count(build_llama(llama_preset("llama-3-8b"))) == 8030261248);
  CHECK(param_count(build_llama(llama_preset("llama-3.2-1b"))) == 1235814400);
  CHECK(param_count(build_llama(llama_preset("llama-2-7b"))) == 6738415616);
  CHECK(param_count(build_llama(llama_preset("llama-3-70b"))) == 70553706496);
}

TEST_CASE("build_llama_TiedHeadSharesTheEmbedding") {
  const Graph g = build_llama(preset_with_layers("llama-3.2-1b", 1));
  const Node& head = g.node(*g.find("lm_head"));
  REQUIRE(head.params.size() == 1);
  CHECK(head.params[0].tied_to == "model.embed_tokens.weight");
  CHECK(own_params(g).count("lm_head.weight") == 0);
}

TEST_CASE("build_llama_WiringAndEqualHeadsSkipRepetition") {
  const Graph g = build_llama(small());
  auto inputs = [&](const std::string& name) {
    std::vector<std::string> names;
    for (Vertex v : g.inputs_of(*g.find(name))) names.push_back(g.node(v).name);
    return names;
  };
  const std::string a = "model.layers.0.self_attn.";
  CHECK(inputs(a + "scores") == std::vector<std::string>{a + "q_rotary", a + "key_t"});
  CHECK(inputs(a + "context") == std::vector<std::string>{a + "softmax", a + "v_repeat"});
  CHECK(inputs("model.layers.0.mlp.gate_up") ==
        std::vector<std::string>{"model.layers.0.mlp.act", "model.layers.0.mlp.up_proj"});
  for (Vertex v : g.topological_order()) {
    if (!is_boundary(g.node(v).kind)) CHECK_NOTHROW(rule_for(g, v));
  }
  LlamaConfig mha = small();
  mha.n_kv_head = mha.n_head;
  const Graph m = build_llama(mha);
  CHECK_FALSE(m.find(a + "k_repeat").has_value());
  CHECK(g.size() == m.size() + 2);
}

TEST_CASE("enumerate_op_shardings_RepeatKvShardsKvHeadsOrRepeatsReplicated") {
  LlamaConfig c = small();
  c.n_head = 8;  // head dim 8, 8 query heads over 2 KV heads: 4 repeats
  const Graph g = build_llama(c);
  const std::string node = "model.layers.0.self_attn.k_repeat";
  // 2 devices: shard the KV heads (the result's heads contiguous), or repeat a
  // replicated input into a block of repeats per KV head.
  const auto two = shardings_of(g, node, "2");
  CHECK(two.count("SRRR->SRRR") == 1);
  CHECK(two.count("RRRR->RS(2)RR") == 1);
  // 4 devices do not divide 2 KV heads: the input is replicated, never split
  // inside a KV head.
  for (const auto& text : shardings_of(g, node, "4")) CHECK(text.rfind("RSRR->", 0) == std::string::npos);
  CHECK(shardings_of(g, node, "4").count("RRRR->RS(2)RR") == 1);
  // A 2x2 mesh shards KV heads on one axis and their repeats on the other:
  // the query heads' contiguous shard over both axes.
  const auto grid = shardings_of(g, node, "2x2");
  CHECK(grid.count("RS0RR->RS01RR") == 1);
}

TEST_CASE("enumerate_op_shardings_RotaryKeepsHeadDimWhole") {
  const Graph g = build_llama(small());
  const auto texts = shardings_of(g, "model.layers.0.self_attn.q_rotary", "2");
  CHECK(texts.count("SRRR->SRRR") == 1);
  CHECK(texts.count("RSRR->RSRR") == 1);
  CHECK(texts.count("RRSR->RRSR") == 1);
  CHECK(texts.count("RRRS->RRRS") == 0);
  CHECK(shardings_of(g, "model.layers.0.input_layernorm", "2").count("RRS,S->RRS") == 0);
}

TEST_CASE("build_llama_BadSizesAreOneLineErrors") {
  auto error_of = [](LlamaConfig c) -> std::string {
    try {
      build_llama(c);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  LlamaConfig c = small();
  c.n_kv_head = 3;
  CHECK(error_of(c) == "llama n_kv_head 3 does not divide n_head 4");
  c = small();
  c.hidden = 60;  // head dim 15
  CHECK(error_of(c) == "llama head dim 15 (hidden 60 / n_head 4) is odd; rotary embeddings need it even");
  c = small();
  c.n_head = 5;
  CHECK(error_of(c) == "llama n_head 5 does not divide hidden 64");
  c = small();
  c.n_layer = 100000000;
  CHECK(error_of(c) == "llama n_layer 100000000 exceeds 1000, the most the builder takes");
  c = small();
  c.ffn = 0;
  CHECK(error_of(c) == "llama ffn must be positive, got 0");
  c = small();
  c.seq = 9000;
  CHECK(error_of(c) == "llama seq 9000 exceeds max_positions 8192");
  CHECK_THROWS_WITH_AS(llama_preset("llama-4"),
                       "unknown llama preset 'llama-4' (expected llama-3.2-1b, llama-3.2-3b, llama-2-7b, llama-3-8b, "
                       "llama-3-70b)",
                       InputError);
}
