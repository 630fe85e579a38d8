#include <doctest/doctest.h>

#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "ir/models.hpp"

using namespace shardsynth::ir;

namespace {
Node relu(const std::string& name) { return Node{name, "relu", "", {{4, 4}, DType::float32}, {}, {}}; }
}  // namespace

TEST_CASE("build_mlp_ShapesAndParams") {
  const Graph g = build_mlp({2, 16, 32, 64, DType::float32});
  std::vector<std::string> names;
  for (Vertex v : g.topological_order()) names.push_back(g.node(v).name);
  CHECK(names == std::vector<std::string>{"x", "fc1", "gelu", "fc2", "output"});
  const Node& fc1 = g.node(*g.find("fc1"));
  CHECK(fc1.type.shape == std::vector<int64_t>{2, 16, 64});
  REQUIRE(fc1.params.size() == 2);
  CHECK(fc1.params[0].name == "weight");
  CHECK(fc1.params[0].type.shape == std::vector<int64_t>{64, 32});  // nn.Linear stores [out, in]
  CHECK(fc1.params[1].type.shape == std::vector<int64_t>{64});
  CHECK(g.inputs_of(*g.find("fc2")) == std::vector<Vertex>{*g.find("gelu")});
}

TEST_CASE("build_mlp_RejectsNonPositiveSizes") {
  CHECK_THROWS_WITH_AS(build_mlp({8, 0, 16, 16, DType::float32}), doctest::Contains("seq"), InputError);
  CHECK_THROWS_AS(build_mlp({1 << 30, 1 << 30, 1 << 30, 1 << 30, DType::float32}), InputError);
}

TEST_CASE("topological_order_CycleNamesANode") {
  Graph g;
  Vertex a = g.add_isolated(relu("a"));
  Vertex b = g.add_isolated(relu("b"));
  Vertex c = g.add_isolated(relu("c"));
  g.connect(a, b, 0);
  g.connect(b, c, 0);
  g.connect(c, a, 0);
  CHECK_THROWS_WITH_AS(g.topological_order(), doctest::Contains("cycle through node '"), InputError);
}

TEST_CASE("topological_order_ProducersComeFirst") {
  Graph g;
  Vertex late = g.add_isolated(relu("late"));
  Vertex early = g.add_isolated(relu("early"));
  g.connect(early, late, 0);
  CHECK(g.topological_order() == std::vector<Vertex>{early, late});
}

TEST_CASE("add_node_RejectsDuplicatesAndUnknownInputs") {
  Graph g;
  g.add_node(relu("a"));
  CHECK_THROWS_WITH_AS(g.add_node(relu("a")), doctest::Contains("duplicate node name 'a'"), InputError);
  CHECK_THROWS_WITH_AS(g.add_node(relu("b"), {"nope"}), doctest::Contains("'nope'"), InputError);
}

TEST_CASE("inputs_of_DetectsMissingOperand") {
  Graph g;
  Vertex a = g.add_node(relu("a"));
  Vertex b = g.add_isolated(Node{"b", "add", "", {{4, 4}, DType::float32}, {}, {}});
  g.connect(a, b, 1);  // operand 0 never fed
  CHECK_THROWS_WITH_AS(g.inputs_of(b), doctest::Contains("operand 0 of node 'b' is missing"), InputError);
  g.connect(a, b, 0);
  CHECK(g.inputs_of(b).size() == 2);
  CHECK(g.users_of(a) == std::vector<std::pair<Vertex, int>>{{b, 0}, {b, 1}});
}
