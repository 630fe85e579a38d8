// costs::plan_resharding and costs::apply on 1-D and 2-D meshes.
#include <doctest/doctest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "costs/collective.hpp"
#include "costs/cost_model.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"

namespace shardsynth::costs {
namespace {

using K = CollectiveKind;

std::optional<std::vector<Collective>> plan(const std::string& from, const std::string& to, const std::string& mesh_text) {
  const ir::Mesh mesh = ir::parse_mesh(mesh_text);
  return plan_resharding(ir::parse_spec(from, mesh.rank()), ir::parse_spec(to, mesh.rank()), mesh);
}

// Applies every step of the plan in order to `from`.
ir::Spec run_plan(const std::vector<Collective>& steps, const ir::Spec& from) {
  ir::Spec spec = from;
  for (const auto& step : steps) spec = apply(step, spec);
  return spec;
}

}  // namespace

TEST_CASE("plan_resharding_SameSpecIsEmpty") {
  for (const char* spec : {"RR", "RS", "SR", "RR+P"}) {
    CAPTURE(spec);
    auto p = plan(spec, spec, "8");
    REQUIRE(p.has_value());
    CHECK(p->empty());
  }
  for (const char* spec : {"S0S1", "RS01", "S1R+P0", "RR+P01", "RRR"}) {
    CAPTURE(spec);
    auto p = plan(spec, spec, "2x4");
    REQUIRE(p.has_value());
    CHECK(p->empty());
  }
}

TEST_CASE("plan_resharding_ShardToReplicated") {
  auto p = plan("RS", "RR", "8");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 0, 1, -1}});

  p = plan("SR", "RR", "8");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 0, 0, -1}});
}

TEST_CASE("plan_resharding_ReplicatedToShardIsSlice") {
  auto p = plan("RR", "SR", "8");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::slice, 0, -1, 0}});

  p = plan("RR", "RS", "4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::slice, 0, -1, 1}});
}

TEST_CASE("plan_resharding_ShardToShardIsAllToAll") {
  auto p = plan("RS", "SR", "8");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_to_all, 0, 1, 0}});

  p = plan("SR", "RS", "2");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_to_all, 0, 0, 1}});
}

TEST_CASE("plan_resharding_PartialToReplicatedIsAllReduce") {
  auto p = plan("RR+P", "RR", "8");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_reduce, 0, -1, -1}});
}

TEST_CASE("plan_resharding_PartialToShardIsReduceScatter") {
  auto p = plan("RR+P", "RS", "8");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::reduce_scatter, 0, -1, 1}});

  p = plan("RR+P", "SR", "8");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::reduce_scatter, 0, -1, 0}});
}

TEST_CASE("plan_resharding_CreatingPartialIsUnreachable") {
  CHECK_FALSE(plan("RR", "RR+P", "8").has_value());
  CHECK_FALSE(plan("RS", "RR+P", "8").has_value());
  CHECK_FALSE(plan("RR", "RR+P0", "2x4").has_value());
  // Resolving axis 0 is fine, but a partial sum on axis 1 cannot be created.
  CHECK_FALSE(plan("RR+P0", "RR+P1", "2x4").has_value());
  // A dim sharded by an axis cannot turn into a partial sum on it.
  CHECK_FALSE(plan("S0R", "RR+P0", "2x4").has_value());
}

TEST_CASE("plan_resharding_DifferentRanksThrow") {
  const ir::Mesh mesh = ir::parse_mesh("8");
  CHECK_THROWS_AS(plan_resharding(ir::parse_spec("RS"), ir::parse_spec("RRS"), mesh), std::invalid_argument);
}

TEST_CASE("plan_resharding_TwoDimMeshGatherOneAxis") {
  auto p = plan("S0S1", "RS1", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 0, 0, -1}});

  p = plan("S0S1", "S0R", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 1, 1, -1}});

  p = plan("S0S1", "RR", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 0, 0, -1}, {K::all_gather, 1, 1, -1}});

  // Axes leave a dim minor-most first: S01 sheds axis 1, then axis 0.
  p = plan("RS01", "RR", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 1, 1, -1}, {K::all_gather, 0, 1, -1}});

  // S01 -> S1 is not one all-gather over axis 0 (the blocks a device needs do
  // not sit along axis 0): gather both, then slice axis 1 back.
  p = plan("S01R", "S1R", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 1, 0, -1}, {K::all_gather, 0, 0, -1}, {K::slice, 1, -1, 0}});

  // Axis order within a dim matters: S01 and S10 are different layouts.
  p = plan("RS01", "RS10", "2x4");
  REQUIRE(p.has_value());
  CHECK(p->size() == 4);
}

TEST_CASE("plan_resharding_TwoDimMeshAllToAll") {
  auto p = plan("S0R", "RS0", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_to_all, 0, 0, 1}});

  // Swapping axes: axis 0 cannot join dim 1 while axis 1 is still there, so
  // it is gathered, axis 1 moves by all-to-all, and axis 0 is sliced back.
  p = plan("S0S1", "S1S0", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 0, 0, -1}, {K::all_to_all, 1, 1, 0}, {K::slice, 0, -1, 1}});
}

TEST_CASE("plan_resharding_TwoDimMeshSliceAndReduce") {
  auto p = plan("RR", "S0S1", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::slice, 0, -1, 0}, {K::slice, 1, -1, 1}});

  p = plan("RR+P01", "RR", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_reduce, 0, -1, -1}, {K::all_reduce, 1, -1, -1}});

  p = plan("RR+P0", "RS0", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::reduce_scatter, 0, -1, 1}});

  // Keeping one partial axis while resolving the other.
  p = plan("RR+P01", "RR+P1", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_reduce, 0, -1, -1}});
}

TEST_CASE("plan_resharding_StepOrder") {
  // Unneeded partial sums first, then shedding axes, then gaining them.
  auto p = plan("S0R+P1", "RS0", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_reduce, 1, -1, -1}, {K::all_to_all, 0, 0, 1}});

  p = plan("S1R", "RS0", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 1, 0, -1}, {K::slice, 0, -1, 1}});

  p = plan("RS1+P0", "S1S0", "2x4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_to_all, 1, 1, 0}, {K::reduce_scatter, 0, -1, 1}});

  // Blocked dims: changing the block count reshards the whole dim.
  p = plan("RS(3)", "RS", "4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::all_gather, 0, 1, -1}, {K::slice, 0, -1, 1}});
  p = plan("RR", "RS(3)", "4");
  REQUIRE(p.has_value());
  CHECK(*p == std::vector<Collective>{{K::slice, 0, -1, 1, 3}});
}

TEST_CASE("plan_resharding_PlanReachesTarget") {
  const std::vector<std::string> one_d = {"RR", "RS", "SR", "RR+P"};
  const ir::Mesh line = ir::parse_mesh("4");
  for (const auto& from : one_d) {
    for (const auto& to : one_d) {
      CAPTURE(from);
      CAPTURE(to);
      auto p = plan_resharding(ir::parse_spec(from), ir::parse_spec(to), line);
      if (to == "RR+P" && from != "RR+P") {
        CHECK_FALSE(p.has_value());
        continue;
      }
      REQUIRE(p.has_value());
      CHECK(run_plan(*p, ir::parse_spec(from)) == ir::parse_spec(to));
    }
  }
  // Single-axis-per-dim specs on a 2x4 mesh (no dim sharded by two axes).
  const std::vector<std::string> two_d = {"RR", "S0R", "S1R", "RS0", "RS1", "S0S1", "S1S0", "RR+P0", "S1R+P0", "RS0+P1",
                                          "RR+P01"};
  const ir::Mesh grid = ir::parse_mesh("2x4");
  for (const auto& from : two_d) {
    for (const auto& to : two_d) {
      CAPTURE(from);
      CAPTURE(to);
      const ir::Spec a = ir::parse_spec(from, 2), b = ir::parse_spec(to, 2);
      auto p = plan_resharding(a, b, grid);
      if (!p) continue;  // creates a partial sum
      CHECK(run_plan(*p, a) == b);
    }
  }
}

TEST_CASE("apply_OneStep") {
  CHECK(apply({K::all_gather, 0, 1, -1}, ir::parse_spec("RS")) == ir::parse_spec("RR"));
  CHECK(apply({K::slice, 0, -1, 0}, ir::parse_spec("RR")) == ir::parse_spec("SR"));
  CHECK(apply({K::all_to_all, 0, 1, 0}, ir::parse_spec("RS")) == ir::parse_spec("SR"));
  CHECK(apply({K::all_reduce, 0, -1, -1}, ir::parse_spec("RR+P")) == ir::parse_spec("RR"));
  CHECK(apply({K::reduce_scatter, 0, -1, 1}, ir::parse_spec("RR+P")) == ir::parse_spec("RS"));

  CHECK(apply({K::all_gather, 1, 1, -1}, ir::parse_spec("RS01", 2)) == ir::parse_spec("RS0", 2));
  CHECK(apply({K::all_gather, 0, 0, -1}, ir::parse_spec("S0S1", 2)) == ir::parse_spec("RS1", 2));
  CHECK(apply({K::slice, 1, -1, 1}, ir::parse_spec("RS0", 2)) == ir::parse_spec("RS01", 2));
  CHECK(apply({K::all_reduce, 1, -1, -1}, ir::parse_spec("S0R+P1", 2)) == ir::parse_spec("S0R", 2));
  CHECK(apply({K::all_reduce, 0, -1, -1}, ir::parse_spec("RR+P01", 2)) == ir::parse_spec("RR+P1", 2));
}

TEST_CASE("collective_name_AllKinds") {
  CHECK(collective_name(K::slice) == "slice");
  CHECK(collective_name(K::all_gather) == "all_gather");
  CHECK(collective_name(K::all_to_all) == "all_to_all");
  CHECK(collective_name(K::all_reduce) == "all_reduce");
  CHECK(collective_name(K::reduce_scatter) == "reduce_scatter");
}

}  // namespace shardsynth::costs
