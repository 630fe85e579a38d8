#include <doctest/doctest.h>

#include "golden.hpp"
#include "ir/error.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"
#include "ir/sharding_rule.hpp"

using namespace shardsynth::ir;

namespace {

Graph unary(const std::string& kind, std::vector<int64_t> in, std::vector<int64_t> out,
            std::map<std::string, std::vector<int64_t>> attrs = {}) {
  Graph g;
  g.add_node(placeholder("x", {in, DType::float32}));
  g.add_node(Node{"op", kind, "", {std::move(out), DType::float32}, {}, std::move(attrs)}, {"x"});
  return g;
}

std::string rule_text(const Graph& g) { return to_string(rule_for(g, *g.find("op"))); }

}  // namespace

TEST_CASE("rule_table_text_Golden") {
  // Adding an op kind is one table entry plus one line here.
  CHECK(rule_table_text() == shardsynth::testing::golden("rule_table.txt"));
}

TEST_CASE("make_rule_LinearOnMlpInput") {
  const Graph g = build_mlp({});
  CHECK(to_string(rule_for(g, *g.find("fc1"))) ==
        "([e0, e1, k], [n, k], [n])->([e0, e1, n]) {e0=8, e1=1024, k=1024, n=4096} reduction={k}");
}

TEST_CASE("make_rule_GroupedDimsAndBroadcastEllipsis") {
  const ShardingRule qkv = make_rule("bs(qhd)->bsqhd", {}, {{2, 8, 48}}, {2, 8, 3, 4, 4}, {{'q', 3}, {'h', 4}});
  CHECK(to_string(qkv) == "([b, s, q*h*d])->([b, s, q, h, d]) {b=2, s=8, q=3, h=4, d=4}");
  const ShardingRule add = make_rule("...,...->...", {}, {{4, 8, 16}, {16}}, {4, 8, 16});
  CHECK(to_string(add) == "([e0, e1, e2], [e2])->([e0, e1, e2]) {e0=4, e1=8, e2=16}");
}

TEST_CASE("make_rule_RejectsInconsistentShapes") {
  CHECK_THROWS_WITH_AS(make_rule("mk,kn->mn", {}, {{4, 8}, {6, 2}}, {4, 2}), doctest::Contains("factor 'k'"), InputError);
  CHECK_THROWS_AS(make_rule("mk,kn->mn", {}, {{4, 8}}, {4, 2}), InputError);
  CHECK_THROWS_AS(make_rule("mk->m", {}, {{4, 8, 2}}, {4}), InputError);
  CHECK_THROWS_AS(make_rule("mk,kn", {}, {{4, 8}, {8, 2}}, {4, 2}), InputError);
  CHECK_THROWS_AS(make_rule("m(ab->m", {}, {{4, 8}}, {4}), InputError);
}

TEST_CASE("rule_for_ViewSplitsAndMergesHeads") {
  CHECK(rule_text(unary("view", {2, 8, 64}, {2, 8, 4, 16})) ==
        "([a, b, c*d])->([a, b, c, d]) {a=2, b=8, c=4, d=16}");
  CHECK(rule_text(unary("view", {2, 8, 4, 16}, {2, 8, 64})) ==
        "([a, b, c, d])->([a, b, c*d]) {a=2, b=8, c=4, d=16}");
  // No factorization: both sides must stay replicated.
  CHECK(rule_text(unary("view", {6, 4}, {4, 6})) == "([a, b])->([c, d]) {a=6, b=4, c=4, d=6} needs_replication={a, b, c, d}");
  CHECK_THROWS_AS(rule_text(unary("view", {6, 4}, {5, 5})), InputError);
}

TEST_CASE("rule_for_PermuteAndTranspose") {
  CHECK(rule_text(unary("permute", {2, 3, 4, 5}, {2, 4, 3, 5}, {{"dims", {0, 2, 1, 3}}})) ==
        "([a, b, c, d])->([a, c, b, d]) {a=2, b=3, c=4, d=5}");
  CHECK(rule_text(unary("transpose", {2, 3, 4}, {2, 4, 3}, {{"dims", {-1, -2}}})) ==
        "([a, b, c])->([a, c, b]) {a=2, b=3, c=4}");
  CHECK_THROWS_AS(rule_text(unary("permute", {2, 3}, {3, 2}, {{"dims", {0, 0}}})), InputError);
  CHECK_THROWS_AS(rule_text(unary("transpose", {2, 3}, {3, 2})), InputError);
}

TEST_CASE("rule_for_SoftmaxAndLayernormReplicateLastDim") {
  CHECK(rule_text(unary("softmax", {4, 8}, {4, 8})) == "([e0, d])->([e0, d]) {e0=4, d=8} needs_replication={d}");
}

TEST_CASE("op_info_UnknownKindNamesKindAndNode") {
  CHECK_THROWS_WITH_AS(op_info("conv3d", "block0"), "unknown op kind 'conv3d' at node 'block0'", InputError);
}
