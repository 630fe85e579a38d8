#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "doc_examples.hpp"
#include "ir/error.hpp"
#include "ir/gpt2.hpp"
#include "ir/graph_json.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"

using namespace shardsynth::ir;
using nlohmann::json;

namespace {

MlpConfig small_mlp() { return MlpConfig{2, 4, 8, 16, DType::float32}; }

Gpt2Config small_gpt2() {
  Gpt2Config c;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 64;
  c.seq = 32;
  c.batch = 2;
  c.vocab = 256;
  return c;
}

// The message graph_from_json throws for `j`, or "" when it accepts it.
std::string error_of(const json& j, const GraphJsonOptions& options = {}) {
  try {
    graph_from_json(j, "g.json", options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

json mlp_json() { return graph_to_json(build_mlp(small_mlp())); }

// The node named `name` in a graph JSON value.
json& node_named(json& j, const std::string& name) {
  for (json& n : j["nodes"]) {
    if (n["name"] == name) return n;
  }
  throw std::runtime_error("no node " + name);
}

}  // namespace

TEST_CASE("graph_to_json_BuiltinMlpRoundTripsByteIdentical") {
  const Graph g = build_mlp(small_mlp());
  const std::string text = graph_to_json(g).dump(2);
  const Graph back = graph_from_json(json::parse(text), "mlp.json");
  CHECK(graph_to_json(back).dump(2) == text);
  REQUIRE(back.size() == g.size());
  for (std::size_t v = 0; v < g.size(); ++v) {
    CHECK(back.node(v).name == g.node(v).name);
    CHECK(back.node(v).kind == g.node(v).kind);
    CHECK(back.node(v).type.shape == g.node(v).type.shape);
    CHECK(back.node(v).params.size() == g.node(v).params.size());
  }
  const json j = json::parse(text);
  CHECK(j["format"] == "shardsynth-graph");
  CHECK(j["version"] == kGraphJsonVersion);
}

TEST_CASE("graph_to_json_BuiltinGpt2RoundTripsByteIdentical") {
  const Graph g = build_gpt2(small_gpt2());
  const std::string text = graph_to_json(g).dump();
  const Graph back = graph_from_json(json::parse(text), "gpt2.json");
  CHECK(graph_to_json(back).dump() == text);
  // Attributes, real attributes, tied params and operand order survive.
  const Node& c_attn = back.node(*back.find("h.0.attn.c_attn"));
  CHECK(c_attn.attrs.at("groups") == std::vector<int64_t>{3});
  const Node& scale = back.node(*back.find("h.1.attn.scale"));
  CHECK(scale.real_attrs.at("divisor") == doctest::Approx(4.0));
  const Node& head = back.node(*back.find("lm_head"));
  REQUIRE(head.params.size() == 1);
  CHECK(head.params[0].tied_to == "wte.weight");
  const auto inputs = back.inputs_of(*back.find("h.0.residual_1"));
  REQUIRE(inputs.size() == 2);
  CHECK(back.node(inputs[0]).name == "drop");
  CHECK(back.node(inputs[1]).name == "h.0.attn.resid_dropout");
  CHECK(back.node(*back.find("input_ids")).type.dtype == DType::int64);
}

TEST_CASE("graph_from_json_AcceptsNodesInAnyOrder") {
  json j = mlp_json();
  std::reverse(j["nodes"].begin(), j["nodes"].end());
  const Graph g = graph_from_json(j, "g.json");
  const auto order = g.topological_order();
  CHECK(g.node(order.front()).name == "x");
  CHECK(g.node(order.back()).name == "output");
}

TEST_CASE("graph_from_json_BadInputNamesFileNodeAndField") {
  struct Case {
    const char* what;                 // the mutation
    std::function<void(json&)> edit;  // applied to the mlp's JSON
    const char* message;              // the whole expected message
  };
  const std::vector<Case> cases = {
      {"zero extent", [](json& j) { node_named(j, "fc1")["shape"] = {8, 0}; },
       "g.json: node 'fc1': field 'shape': expected a list of positive integers, got 0"},
      {"shape not a list", [](json& j) { node_named(j, "fc1")["shape"] = "big"; },
       "g.json: node 'fc1': field 'shape': expected a list of positive integers, got \"big\""},
      {"missing dtype", [](json& j) { node_named(j, "gelu").erase("dtype"); }, "g.json: node 'gelu': field 'dtype': missing"},
      {"bad dtype", [](json& j) { node_named(j, "fc1")["params"][0]["dtype"] = "float8"; },
       "g.json: node 'fc1': param 'weight': field 'dtype': unknown dtype 'float8' (known: float32, float16, bfloat16, "
       "int64)"},
      {"unknown input", [](json& j) { node_named(j, "fc2")["inputs"] = {"gelu2"}; },
       "g.json: node 'fc2': field 'inputs': unknown node 'gelu2'"},
      {"duplicate name", [](json& j) { node_named(j, "gelu")["name"] = "fc1"; },
       "g.json: node 'fc1': field 'name': duplicate node name 'fc1'"},
      {"no name", [](json& j) { j["nodes"][2].erase("name"); }, "g.json: node #2: field 'name': missing"},
      {"misspelt field", [](json& j) { node_named(j, "gelu")["atrs"] = json::object(); },
       "g.json: node 'gelu': field 'atrs': unknown field (known: attrs, dtype, inputs, kind, name, params, real_attrs, "
       "shape, target)"},
      {"attr not integers", [](json& j) { node_named(j, "gelu")["attrs"] = {{"dims", {1.5}}}; },
       "g.json: node 'gelu': field 'attrs.dims': expected a list of integers, got 1.5"},
      {"real attr not a number", [](json& j) { node_named(j, "gelu")["real_attrs"] = {{"divisor", "two"}}; },
       "g.json: node 'gelu': field 'real_attrs.divisor': expected a finite number, got \"two\""},
      {"tied to nothing", [](json& j) { node_named(j, "fc2")["params"][0]["tied_to"] = "wte.weight"; },
       "g.json: node 'fc2': param 'weight': field 'tied_to': unknown parameter 'wte.weight'"},
      {"version", [](json& j) { j["version"] = 2; },
       "g.json: graph: field 'version': unsupported version 2 (this build reads 1)"},
      {"format", [](json& j) { j["format"] = "onnx"; },
       "g.json: graph: field 'format': expected \"shardsynth-graph\", got \"onnx\""},
      {"cycle", [](json& j) { node_named(j, "fc1")["inputs"] = {"fc2"}; },
       "g.json: the graph has a cycle through node 'fc1'"},
      {"unknown kind", [](json& j) { node_named(j, "gelu")["kind"] = "foo"; },
       "g.json: unknown op kind 'foo' at fx node 'gelu' (--unknown-ops=replicate keeps such nodes replicated)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    json j = mlp_json();
    c.edit(j);
    CHECK(error_of(j) == c.message);
  }
  CHECK(error_of(json::array()) == "g.json: expected a JSON object with \"format\", \"version\" and \"nodes\"");
}

TEST_CASE("graph_from_json_ReplicateKeepsUnknownOpsAsOpaque") {
  json j = mlp_json();
  node_named(j, "gelu")["kind"] = "sin";
  node_named(j, "gelu")["target"] = "torch.sin";
  std::vector<std::string> warnings;
  const Graph g = graph_from_json(j, "g.json", {UnknownOps::replicate, &warnings});
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "g.json: unknown op kind 'sin' at fx node 'gelu': kept replicated as 'opaque'");
  const Vertex v = *g.find("gelu");
  CHECK(g.node(v).kind == "opaque");
  CHECK(g.node(v).target == "sin: torch.sin");
  // Its rule keeps every factor replicated.
  const ShardingRule rule = rule_for(g, v);
  CHECK(rule.operands.size() == 1);
  for (const Factor& f : rule.factors) CHECK(f.kind == FactorKind::needs_replication);
  // The replicated graph round-trips as it is.
  const std::string text = graph_to_json(g).dump();
  CHECK(graph_to_json(graph_from_json(json::parse(text), "again.json")).dump() == text);
  CHECK(parse_unknown_ops("replicate") == UnknownOps::replicate);
  CHECK_THROWS_WITH_AS(parse_unknown_ops("ignore"), "unknown --unknown-ops value 'ignore' (known: error, replicate)",
                       InputError);
}

TEST_CASE("rule_for_OpaqueTakesAnyArityAndParams") {
  Graph g;
  g.add_node(Node{"a", std::string(kPlaceholder), "", {{4, 8}, DType::float32}, {}, {}, {}});
  g.add_node(Node{"b", std::string(kPlaceholder), "", {{8}, DType::float32}, {}, {}, {}});
  // Built field by field: GCC 12 at -O3 misreads the nested braced
  // temporaries' cleanup as reading an uninitialized shape.
  Node conv;
  conv.name = "conv";
  conv.kind = std::string(kOpaque);
  conv.target = "Conv2d";
  conv.type = {{2, 16}, DType::float32};
  conv.params.push_back({"weight", {{3, 3}, DType::float32}});
  g.add_node(conv, {"a", "b"});
  const ShardingRule rule = rule_for(g, *g.find("conv"));
  CHECK(to_string(rule) ==
        "([a, b], [c], [d, e])->([f, g]) {a=4, b=8, c=8, d=3, e=3, f=2, g=16} "
        "needs_replication={a, b, c, d, e, f, g}");
  CHECK(param_info(g.node(*g.find("conv")), "weight").display_perm.empty());
}

TEST_CASE("graph_json_md_EveryJsonBlockIsAcceptedAndTheMainExampleRoundTrips") {
  const auto blocks = shardsynth::testing::fenced_blocks(std::string(SHARDSYNTH_DOCS_DIR) + "/graph_json.md", "json");
  REQUIRE(blocks.size() >= 2);
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    CAPTURE(i);
    const json j = json::parse(blocks[i]);
    const Graph g = graph_from_json(j, "graph_json.md block " + std::to_string(i));
    for (Vertex v = 0; v < g.size(); ++v) {
      if (!is_boundary(g.node(v).kind)) CHECK_NOTHROW(rule_for(g, v));
    }
    if (i == 0) {
      CHECK(graph_to_json(g) == j);
      CHECK(graph_to_json(g) == graph_to_json(build_mlp(small_mlp())));
    }
  }
}
