// The slapo preset's resharding table, entry by entry, for p = 2, 4, 8.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/slapo_cost_model.hpp"
#include "ir/error.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::costs {
namespace {

// Cost of resharding a tensor of `shape` from `from` to `to` on a 1-D mesh of p devices.
std::optional<int64_t> cost(const std::vector<int64_t>& shape, const std::string& from, const std::string& to, int64_t p) {
  const SlapoCostModel model;
  return model.reshard_cost(ir::TensorType{shape}, ir::parse_spec(from), ir::parse_spec(to),
                            ir::parse_mesh(std::to_string(p)));
}

// Product of the last two dims (the only dim of a rank-1 tensor).
int64_t window_volume(const std::vector<int64_t>& shape) {
  int64_t v = 1;
  for (std::size_t i = shape.size() >= 2 ? shape.size() - 2 : 0; i < shape.size(); ++i) v *= shape[i];
  return v;
}

}  // namespace

TEST_CASE("SlapoCostModel_TableEntriesRank2And3") {
  const std::vector<std::vector<int64_t>> shapes = {{8, 1024, 4096}, {1024, 1024}, {8, 1024, 1024}, {2, 4, 8}};
  for (const auto& shape : shapes) {
    for (int64_t p : {2, 4, 8}) {
      CAPTURE(ir::shape_string(shape));
      CAPTURE(p);
      const int64_t v = window_volume(shape);
      {
        INFO("all_gather");
        CHECK(cost(shape, "RS", "RR", p) == v / p);
        CHECK(cost(shape, "SR", "RR", p) == v / p);
      }
      {
        INFO("all_to_all");
        CHECK(cost(shape, "RS", "SR", p) == v * (p - 1) / (p * p));
        CHECK(cost(shape, "SR", "RS", p) == v * (p - 1) / (p * p));
        // The same figure, written as (1/p - 1/p^2) V (exact when p^2 divides V).
        if (v % (p * p) == 0) {
          CHECK(cost(shape, "SR", "RS", p) == v / p - v / (p * p));
        }
      }
      {
        INFO("slice_and_same_spec");
        CHECK(cost(shape, "RR", "RS", p) == 0);
        CHECK(cost(shape, "RR", "SR", p) == 0);
        for (const char* spec : {"RR", "RS", "SR", "RR+P"}) {
          CHECK(cost(shape, spec, spec, p) == 0);
        }
      }
      {
        INFO("partial");
        CHECK(cost(shape, "RR+P", "RR", p) == v);
        CHECK(cost(shape, "RR+P", "RS", p) == v * (p - 1) / p);
        CHECK(cost(shape, "RR+P", "SR", p) == v * (p - 1) / p);
        CHECK_FALSE(cost(shape, "RR", "RR+P", p).has_value());
        CHECK_FALSE(cost(shape, "RS", "RR+P", p).has_value());
      }
    }
  }
}

TEST_CASE("SlapoCostModel_TableEntriesRank1") {
  const std::vector<int64_t> shape = {4096};
  const int64_t v = 4096;
  for (int64_t p : {2, 4, 8}) {
    CAPTURE(p);
    CHECK(cost(shape, "S", "R", p) == v / p);
    CHECK(cost(shape, "R", "S", p) == 0);
    CHECK(cost(shape, "R", "R", p) == 0);
    CHECK(cost(shape, "S", "S", p) == 0);
    CHECK(cost(shape, "R+P", "R", p) == v);
    CHECK(cost(shape, "R+P", "S", p) == v * (p - 1) / p);
    CHECK_FALSE(cost(shape, "R", "R+P", p).has_value());
  }
}

TEST_CASE("SlapoCostModel_SeedFigures") {
  CHECK(cost({8, 1024, 4096}, "SR", "RS", 8) == 458752);
  CHECK(cost({8, 1024, 4096}, "RS", "RR", 8) == 524288);
  CHECK(cost({8, 1024, 1024}, "RS", "RR", 8) == 131072);
  CHECK(cost({8, 1024, 1024}, "RR+P", "RR", 8) == 1048576);
}

TEST_CASE("SlapoCostModel_RoundsDown") {
  // V = 15 on two devices.
  CHECK(cost({3, 5}, "RS", "RR", 2) == 7);
  CHECK(cost({3, 5}, "RS", "SR", 2) == 3);
  CHECK(cost({3, 5}, "RR+P", "RS", 2) == 7);
  CHECK(cost({3, 5}, "RR+P", "RR", 2) == 15);
}

TEST_CASE("SlapoCostModel_LeadingDimsDoNotCount") {
  // Only the last two dims make up V.
  CHECK(cost({1, 1024, 1024}, "RS", "RR", 8) == cost({64, 1024, 1024}, "RS", "RR", 8));
  CHECK(cost({3, 7, 64, 32}, "RR+P", "RR", 4) == 64 * 32);
}

TEST_CASE("SlapoCostModel_CollectiveCostDirect") {
  const SlapoCostModel model;
  const ir::Mesh mesh = ir::parse_mesh("4");
  const ir::TensorType t{{16, 32}};
  const ir::Spec rr = ir::parse_spec("RR");
  CHECK(model.collective_cost({CollectiveKind::slice, 0, -1, 1}, t, rr, mesh) == 0);
  CHECK(model.collective_cost({CollectiveKind::all_gather, 0, 1, -1}, t, ir::parse_spec("RS"), mesh) == 128);
  CHECK(model.collective_cost({CollectiveKind::all_to_all, 0, 1, 0}, t, ir::parse_spec("RS"), mesh) == 96);
  CHECK(model.collective_cost({CollectiveKind::all_reduce, 0, -1, -1}, t, ir::parse_spec("RR+P"), mesh) == 512);
  CHECK(model.collective_cost({CollectiveKind::reduce_scatter, 0, -1, 0}, t, ir::parse_spec("RR+P"), mesh) == 384);
}

TEST_CASE("SlapoCostModel_Properties") {
  const auto model = make_cost_model("slapo");
  REQUIRE(model != nullptr);
  CHECK(model->name() == "slapo");
  CHECK(model->unit() == "elements");
  CHECK(model->resolves_partial_in_op());
  CHECK_FALSE(model->shards_graph_inputs());
  for (const char* mesh : {"2", "4", "8"}) {
    const ir::SpecSpace space = model->spec_space(ir::parse_mesh(mesh));
    CHECK(space.window == 2);
    CHECK(space.require_sharded_reduction);
  }
  CHECK(cost_model_names() == std::vector<std::string>{"alpha-beta", "slapo"});
}

TEST_CASE("make_cost_model_UnknownNameThrows") {
  CHECK_THROWS_AS(make_cost_model("nope"), ir::InputError);
  CHECK_THROWS_AS(make_cost_model(""), ir::InputError);
  CHECK_THROWS_WITH(make_cost_model("nope"), doctest::Contains("nope"));
}

TEST_CASE("SlapoCostModel_TwoDimMeshThrows") {
  const auto model = make_cost_model("slapo");
  CHECK_THROWS_AS(model->spec_space(ir::parse_mesh("2x4")), ir::InputError);
  CHECK_THROWS_WITH(model->spec_space(ir::parse_mesh("2x4")), doctest::Contains("2x4"));
}

}  // namespace shardsynth::costs
