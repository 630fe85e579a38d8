// Point-to-point transfers between pipeline stages.
#include <doctest/doctest.h>

#include "costs/cost_model.hpp"
#include "costs/transfer.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"

using namespace shardsynth;

TEST_CASE("transfer_cost_AlphaBetaUsesAxisZeroLinks") {
  // 2x2: axis 0 is the inter-node link (25 GB/s, 5 us by default).
  const auto mesh = ir::parse_mesh("2x2");
  const auto group = ir::parse_mesh("2");
  const auto model = costs::make_cost_model("alpha-beta");
  const ir::TensorType t{{4, 1000}, ir::DType::float32};
  const auto whole = costs::transfer_cost(*model, t, ir::parse_spec("RR"), group, mesh);
  CHECK(whole.elements == 4000);
  CHECK(whole.bytes == 16000);
  CHECK(whole.cost == 5000 + 640);  // latency + 16000 bytes / 25 bytes per ns
  const auto half = costs::transfer_cost(*model, t, ir::parse_spec("SR"), group, mesh);
  CHECK(half.bytes == 8000);
  CHECK(half.cost == 5000 + 320);
}

TEST_CASE("transfer_cost_VolumeModelCountsElements") {
  const auto mesh = ir::parse_mesh("2x2");
  const auto group = ir::parse_mesh("2");
  const auto model = costs::make_cost_model("slapo");
  const ir::TensorType t{{4, 1000}, ir::DType::float16};
  const auto sent = costs::transfer_cost(*model, t, ir::parse_spec("RS"), group, mesh);
  CHECK(sent.elements == 2000);
  CHECK(sent.bytes == 4000);
  CHECK(sent.cost == 2000);
}

TEST_CASE("transfer_cost_OverriddenLinks") {
  auto mesh = ir::parse_mesh("2x2");
  ir::set_links(mesh, "10,200", "2,1");
  const auto model = costs::make_cost_model("alpha-beta");
  const ir::TensorType t{{1000}, ir::DType::float32};
  CHECK(costs::transfer_cost(*model, t, ir::parse_spec("R"), ir::parse_mesh("2"), mesh).cost == 2000 + 400);
}
