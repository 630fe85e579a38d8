#include <doctest/doctest.h>

#include <set>

#include "ir/models.hpp"
#include "ir/op_sharding.hpp"
#include "ir/op_table.hpp"

using namespace shardsynth::ir;

namespace {

const SpecSpace kSlapo{2, true, false};
const SpecSpace kFull{-1, false};

// "operands -> result" for each sharding, e.g. "SR,RR,R->SR".
std::set<std::string> texts(const std::vector<OpSharding>& shardings, int mesh_rank) {
  std::set<std::string> out;
  for (const auto& s : shardings) {
    std::string text;
    for (const auto& spec : s.operands) text += (text.empty() ? "" : ",") + to_string(spec, mesh_rank);
    out.insert(text + "->" + to_string(s.result, mesh_rank));
  }
  return out;
}

}  // namespace

TEST_CASE("enumerate_op_shardings_SlapoLinearHasThePrsThreeStrategies") {
  const Graph g = build_mlp({});
  const auto shardings = enumerate_op_shardings(rule_for(g, *g.find("fc1")), parse_mesh("8"), kSlapo);
  // Weights in stored [out, in] layout: "SR" is column-parallel (the PR's RS).
  CHECK(texts(shardings, 1) == std::set<std::string>{"SR,RR,R->SR", "RS,RS,R->RR+P", "RR,SR,S->RS"});
}

TEST_CASE("enumerate_op_shardings_RespectsDivisibility") {
  const Graph g = build_mlp({8, 6, 16, 32, DType::float32});  // seq 6 does not divide by 4
  const auto shardings = enumerate_op_shardings(rule_for(g, *g.find("fc1")), parse_mesh("4"), kSlapo);
  CHECK(texts(shardings, 1) == std::set<std::string>{"RS,RS,R->RR+P", "RR,SR,S->RS"});
}

TEST_CASE("enumerate_op_shardings_NeedsReplicationFactorStaysReplicated") {
  Graph g;
  g.add_node(placeholder("x", {{8, 16, 32}, DType::float32}));
  // Built field by field: GCC 12 at -O3 misreads the nested braced
  // temporaries' cleanup as reading an uninitialized shape.
  Node ln;
  ln.name = "ln";
  ln.kind = "layernorm";
  ln.type = {{8, 16, 32}, DType::float32};
  ln.params.push_back({"weight", {{32}, DType::float32}});
  ln.params.push_back({"bias", {{32}, DType::float32}});
  g.add_node(ln, {"x"});
  const auto shardings = enumerate_op_shardings(rule_for(g, *g.find("ln")), parse_mesh("4"), kSlapo);
  CHECK(texts(shardings, 1) == std::set<std::string>{"RR,R,R->RR", "SR,R,R->SR"});
}

TEST_CASE("enumerate_op_shardings_TwoDimensionalMeshAllFactorAssignments") {
  const ShardingRule matmul = make_rule("mk,kn->mn", {{'k', FactorKind::reduction}}, {{8, 8}, {8, 8}}, {8, 8});
  const auto shardings = enumerate_op_shardings(matmul, parse_mesh("2x4"), kFull);
  CHECK(shardings.size() == 16);  // each of the 2 axes on m, k, n or nothing
  const auto all = texts(shardings, 2);
  CHECK(all.count("S0S1,S1R->S0R+P1"));
  CHECK(all.count("S01R,RR->S01R"));
  CHECK(all.count("RR,RR->RR"));
}

TEST_CASE("enumerate_op_shardings_MinorFactorOfGroupedDimIsBlocked") {
  // [s, (h d)] -> [s, h, d]: sharding h is a contiguous shard of the merged
  // dim; sharding d alone shards within each of the h blocks (S(4)), which
  // only a model that allows blocked specs offers.
  const ShardingRule split = make_rule("s(hd)->shd", {}, {{4, 32}}, {4, 4, 8}, {{'h', 4}});
  CHECK(texts(enumerate_op_shardings(split, parse_mesh("2"), kFull), 1) ==
        std::set<std::string>{"RR->RRR", "SR->SRR", "RS->RSR", "RS(4)->RRS"});
  CHECK(texts(enumerate_op_shardings(split, parse_mesh("2"), SpecSpace{-1, false, false}), 1) ==
        std::set<std::string>{"RR->RRR", "SR->SRR", "RS->RSR"});
  // In every offered sharding of a grouped dim, the sharded factors form one
  // run whose factors, all but the last, are fully sharded.
  const ShardingRule three = make_rule("(abc)->abc", {}, {{32}}, {2, 4, 4});
  const Mesh mesh = parse_mesh("2x2");
  std::set<std::string> inputs;
  for (const auto& s : enumerate_op_shardings(three, mesh, kFull)) {
    inputs.insert(to_string(s.operands[0], 2));
    int first = -1, last = -1;
    for (int f = 0; f < 3; ++f) {
      if (s.factor_axes[f].empty()) continue;
      if (first < 0) first = f;
      last = f;
    }
    for (int f = first; f >= 0 && f < last; ++f) {
      int64_t parts = 1;
      for (int axis : s.factor_axes[f]) parts *= mesh.shape[axis];
      CHECK(parts == three.factors[f].size);
    }
  }
  CHECK(inputs.count("S01"));    // a on axis 0 (fully), b on axis 1
  CHECK(inputs.count("S0(2)"));  // b alone: blocked by a
  CHECK(inputs.count("S0(8)"));  // c alone: blocked by a and b
  CHECK_FALSE(inputs.count("S0(2)1"));
}
