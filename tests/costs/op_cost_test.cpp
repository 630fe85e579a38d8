// costs::op_cost, costs::edge_cost, param_bytes and activation_bytes in
// inference and training, priced by the alpha-beta model (hand-computed).
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costs/alpha_beta_cost_model.hpp"
#include "costs/op_cost.hpp"
#include "ir/error.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::costs {
namespace {

// float32 [1024, 1024]: 4 MiB.
const ir::TensorType kSquare{{1024, 1024}, ir::DType::float32};

// On mesh "8" (200 bytes/ns, 1000 ns per step), for kSquare:
constexpr int64_t kAllReduce8 = 50700;  // 14000 + 2 * 7/8 * 4 MiB / 200 = 14000 + 36700.16
constexpr int64_t kAllGather8 = 25350;  // 7000 + 7/8 * 4 MiB / 200 = 7000 + 18350.08
constexpr int64_t kAllToAll8 = 9294;    // 7000 + 7/64 * 4 MiB / 200 = 7000 + 2293.76

ir::Spec spec(const std::string& text, const ir::Mesh& mesh) { return ir::parse_spec(text, mesh.rank()); }

OperandUse use(const std::string& text, const ir::Mesh& mesh, std::vector<int> grad_partial = {}) {
  return OperandUse{kSquare, spec(text, mesh), std::move(grad_partial)};
}

std::optional<int64_t> edge(Mode mode, const std::string& produced, const OperandUse& u, bool needs_grad,
                            const ir::Mesh& mesh) {
  const AlphaBetaCostModel model;
  return edge_cost(model, mode, spec(produced, mesh), u, needs_grad, mesh);
}

}  // namespace

TEST_CASE("parse_mode_NamesRoundTrip") {
  CHECK(parse_mode("inference") == Mode::inference);
  CHECK(parse_mode("training") == Mode::training);
  CHECK(mode_name(Mode::inference) == "inference");
  CHECK(mode_name(Mode::training) == "training");
  for (Mode m : {Mode::inference, Mode::training}) CHECK(parse_mode(mode_name(m)) == m);
  for (const char* bad : {"", "train", "Training", "inference "}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_mode(bad), ir::InputError);
  }
  try {
    parse_mode("bogus");
    FAIL("parse_mode accepted 'bogus'");
  } catch (const ir::InputError& e) {
    CHECK(std::string(e.what()).find("'bogus'") != std::string::npos);
  }
}

TEST_CASE("op_cost_InferenceIsComputeOnly") {
  const AlphaBetaCostModel model;
  const ir::Mesh mesh = ir::parse_mesh("8");
  // 1e12 flops over 8 shards: 1.25e11 / 312000 = 400641.03 ns.
  const std::vector<OperandUse> params = {use("RR", mesh, {0})};
  auto cost = op_cost(model, Mode::inference, 1e12, 8, kSquare, spec("RS", mesh), spec("RS", mesh), params, mesh);
  REQUIRE(cost.has_value());
  CHECK(cost->compute == 400641);
  CHECK(cost->resolve == 0);
  CHECK(cost->grad_sync == 0);  // no backward in inference, even with a partial gradient
  CHECK(cost->total() == 400641);

  // One shard: the whole 3205128.2 ns.
  cost = op_cost(model, Mode::inference, 1e12, 1, kSquare, spec("RR", mesh), spec("RR", mesh), {}, mesh);
  REQUIRE(cost.has_value());
  CHECK(cost->compute == 3205128);
}

TEST_CASE("op_cost_ResolvesPartialResultWhenOutputDiffers") {
  const AlphaBetaCostModel model;
  const ir::Mesh mesh = ir::parse_mesh("8");
  for (Mode mode : {Mode::inference, Mode::training}) {
    CAPTURE(mode_name(mode));
    auto cost = op_cost(model, mode, 1e12, 8, kSquare, spec("RR+P", mesh), spec("RR", mesh), {}, mesh);
    REQUIRE(cost.has_value());
    CHECK(cost->resolve == kAllReduce8);
    CHECK(cost->total() == cost->compute + kAllReduce8);
    // Reduce-scatter instead: 7000 + 7/8 * 4 MiB / 200.
    // In training the output's gradient (SR) is all-gathered back to the
    // result's dims (RR), at the same price.
    cost = op_cost(model, mode, 1e12, 8, kSquare, spec("RR+P", mesh), spec("SR", mesh), {}, mesh);
    REQUIRE(cost.has_value());
    CHECK(cost->resolve == (mode == Mode::training ? 2 : 1) * kAllGather8);
    // Same spec: nothing to resolve (alpha-beta hands partial results on).
    cost = op_cost(model, mode, 1e12, 8, kSquare, spec("RR+P", mesh), spec("RR+P", mesh), {}, mesh);
    REQUIRE(cost.has_value());
    CHECK(cost->resolve == 0);
    // A partial sum cannot be created.
    CHECK_FALSE(op_cost(model, mode, 1e12, 8, kSquare, spec("RR", mesh), spec("RR+P", mesh), {}, mesh).has_value());
  }
}

TEST_CASE("op_cost_TrainingTriplesComputeAndSyncsPartialGradients") {
  const AlphaBetaCostModel model;
  const ir::Mesh mesh = ir::parse_mesh("8");
  // A data-parallel weight: replicated, its gradient partial on axis 0 -> all-reduce of the whole 4 MiB.
  auto cost = op_cost(model, Mode::training, 1e12, 8, kSquare, spec("RS", mesh), spec("RS", mesh),
                      {use("RR", mesh, {0}), use("RS", mesh, {})}, mesh);
  REQUIRE(cost.has_value());
  CHECK(cost->compute == 3 * 400641);
  CHECK(cost->resolve == 0);
  CHECK(cost->grad_sync == kAllReduce8);
  CHECK(cost->total() == 3 * 400641 + kAllReduce8);

  // No partial gradient: no sync.
  cost = op_cost(model, Mode::training, 1e12, 8, kSquare, spec("RS", mesh), spec("RS", mesh), {use("RS", mesh)}, mesh);
  REQUIRE(cost.has_value());
  CHECK(cost->grad_sync == 0);

  // Two params, both partial: the syncs add.
  cost = op_cost(model, Mode::training, 1e12, 8, kSquare, spec("RS", mesh), spec("RS", mesh),
                 {use("RR", mesh, {0}), use("RR", mesh, {0})}, mesh);
  REQUIRE(cost.has_value());
  CHECK(cost->grad_sync == 2 * kAllReduce8);
}

TEST_CASE("op_cost_TrainingGradSyncOnLocalShardOf2DMesh") {
  const AlphaBetaCostModel model;
  const ir::Mesh mesh = ir::parse_mesh("2x4");
  // Weight sharded on axis 1 ([1024, 256] local = 1 MiB), gradient partial on axis 0:
  // all-reduce over 2 devices at 25 bytes/ns: 2 * 5000 + 2 * 1/2 * 1 MiB / 25 = 10000 + 41943.04.
  auto cost = op_cost(model, Mode::training, 0, 8, kSquare, spec("RS1", mesh), spec("RS1", mesh),
                      {use("RS1", mesh, {0})}, mesh);
  REQUIRE(cost.has_value());
  CHECK(cost->compute == 0);
  CHECK(cost->grad_sync == 51943);
  // Replicated weight, gradient partial on both axes: two all-reduces of 4 MiB.
  // Axis 0: 10000 + 167772.16; axis 1: 6000 + 2 * 3/4 * 4 MiB / 200 = 6000 + 31457.28.
  cost = op_cost(model, Mode::training, 0, 8, kSquare, spec("RR", mesh), spec("RR", mesh), {use("RR", mesh, {0, 1})},
                 mesh);
  REQUIRE(cost.has_value());
  CHECK(cost->grad_sync == 177772 + 37457);
}

TEST_CASE("edge_cost_InferenceIsForwardResharding") {
  const ir::Mesh mesh = ir::parse_mesh("8");
  CHECK(edge(Mode::inference, "RR", use("RS", mesh), true, mesh) == 0);
  CHECK(edge(Mode::inference, "RS", use("RR", mesh), true, mesh) == kAllGather8);
  CHECK(edge(Mode::inference, "RR+P", use("RR", mesh), true, mesh) == kAllReduce8);
  CHECK(edge(Mode::inference, "RR", use("RR", mesh, {0}), true, mesh) == 0);
  CHECK(edge(Mode::inference, "RR", use("RR+P", mesh), true, mesh) == std::nullopt);
}

TEST_CASE("edge_cost_TrainingAddsBackwardResharding") {
  const ir::Mesh mesh = ir::parse_mesh("8");
  // Forward slice (free), backward all-gather of the RS gradient back to RR.
  CHECK(edge(Mode::training, "RR", use("RS", mesh), true, mesh) == 0 + kAllGather8);
  // Megatron's column-parallel input: read replicated, gradient partial on axis 0 -> backward all-reduce.
  CHECK(edge(Mode::training, "RR", use("RR", mesh, {0}), true, mesh) == 0 + kAllReduce8);
  // Forward all-gather, backward slice (free).
  CHECK(edge(Mode::training, "RS", use("RR", mesh), true, mesh) == kAllGather8 + 0);
  // Forward all-reduce of a partial result; its gradient goes back replicated (free).
  CHECK(edge(Mode::training, "RR+P", use("RR", mesh), true, mesh) == kAllReduce8 + 0);
  // Forward and backward all-to-all.
  CHECK(edge(Mode::training, "SR", use("RS", mesh), true, mesh) == 2 * kAllToAll8);
  // Same spec, no partial gradient: free both ways.
  CHECK(edge(Mode::training, "RS", use("RS", mesh), true, mesh) == 0);
  // Read replicated from an RS producer with the gradient partial on axis 0: forward all-gather, backward
  // reduce-scatter RR+P -> RS (7000 + 7/8 * 4 MiB / 200, the all-gather's price).
  CHECK(edge(Mode::training, "RS", use("RR", mesh, {0}), true, mesh) == kAllGather8 + kAllGather8);
  CHECK(edge(Mode::training, "RR", use("RR+P", mesh), true, mesh) == std::nullopt);
  // A partial sum read as is (a scale of it): every summand's gradient is the
  // output's, replicated, so nothing goes back. (Before, the backward was
  // priced as an all-reduce of a partial gradient that no run sends.)
  CHECK(edge(Mode::training, "RR+P", use("RR+P", mesh), true, mesh) == 0);
}

TEST_CASE("tied_param_cost_ReshardsTheParameterAndItsGradient") {
  const AlphaBetaCostModel model;
  const ir::Mesh mesh = ir::parse_mesh("8");
  // Inference reads both uses from the same weights.
  CHECK(tied_param_cost(model, Mode::inference, kSquare, spec("SR", mesh), spec("RR", mesh), mesh) == 0);
  // Same spec: the use reads the stored shard itself.
  CHECK(tied_param_cost(model, Mode::training, kSquare, spec("SR", mesh), spec("SR", mesh), mesh) == 0);
  // Stored SR, used RR: all-gather the parameter for the forward and again
  // for the backward, slice the gradient back (free).
  CHECK(tied_param_cost(model, Mode::training, kSquare, spec("SR", mesh), spec("RR", mesh), mesh) == 2 * kAllGather8);
  // Stored SR, used RS: an all-to-all for each use, and one back.
  CHECK(tied_param_cost(model, Mode::training, kSquare, spec("SR", mesh), spec("RS", mesh), mesh) == 3 * kAllToAll8);
}

TEST_CASE("edge_cost_NoGradientSkipsBackward") {
  const ir::Mesh mesh = ir::parse_mesh("8");
  CHECK(edge(Mode::training, "RR", use("RS", mesh), false, mesh) == 0);
  CHECK(edge(Mode::training, "RR", use("RR", mesh, {0}), false, mesh) == 0);
  CHECK(edge(Mode::training, "RS", use("RR", mesh), false, mesh) == kAllGather8);
  CHECK(edge(Mode::training, "SR", use("RS", mesh), false, mesh) == kAllToAll8);
}

TEST_CASE("param_bytes_ShardAndTrainingState") {
  const ir::Mesh mesh = ir::parse_mesh("8");
  // [1024, 1024] float32 split 8 ways on dim 1: 131072 elements, 524288 bytes.
  CHECK(param_bytes(Mode::inference, kSquare, spec("RS", mesh), mesh) == 524288);
  // Training: weight + gradient + two fp32 Adam moments: 2 * 524288 + 8 * 131072.
  CHECK(param_bytes(Mode::training, kSquare, spec("RS", mesh), mesh) == 2 * 524288 + 8 * 131072);
  CHECK(param_bytes(Mode::inference, kSquare, spec("RR", mesh), mesh) == 4194304);
  CHECK(param_bytes(Mode::training, kSquare, spec("RR", mesh), mesh) == 2 * 4194304 + 8 * 1048576);
  // bf16 with the default policy: half the weight and gradient, the fp32
  // moments and an fp32 master copy (the ZeRO paper's 2 + 2 + 12 bytes).
  const ir::TensorType bf16{{1024, 1024}, ir::DType::bfloat16};
  CHECK(param_bytes(Mode::inference, bf16, spec("RS", mesh), mesh) == 262144);
  CHECK(param_bytes(Mode::training, bf16, spec("RS", mesh), mesh) == 2 * 262144 + 12 * 131072);
  // 2-D mesh: split over both axes.
  const ir::Mesh mesh2 = ir::parse_mesh("2x4");
  CHECK(param_bytes(Mode::inference, kSquare, spec("S0S1", mesh2), mesh2) == 4194304 / 8);
  CHECK(param_bytes(Mode::training, kSquare, spec("RS01", mesh2), mesh2) == 2 * 524288 + 8 * 131072);
  CHECK(param_bytes(Mode::inference, kSquare, spec("RS1", mesh2), mesh2) == 4194304 / 4);
}

TEST_CASE("activation_bytes_LocalShard") {
  const ir::Mesh mesh = ir::parse_mesh("8");
  const ir::TensorType big{{8, 1024, 1024}, ir::DType::float32};
  CHECK(activation_bytes(big, spec("RRR", mesh), mesh) == 33554432);
  CHECK(activation_bytes(big, spec("RRS", mesh), mesh) == 4194304);
  CHECK(activation_bytes(big, spec("SRR", mesh), mesh) == 4194304);
  // A pending partial sum holds the whole buffer.
  CHECK(activation_bytes(big, spec("RRR+P", mesh), mesh) == 33554432);
  // A spec describing only the trailing dims leaves the leading ones whole.
  CHECK(activation_bytes(big, spec("RS", mesh), mesh) == 4194304);
  const ir::Mesh mesh2 = ir::parse_mesh("2x4");
  CHECK(activation_bytes(big, spec("S0RS1", mesh2), mesh2) == 4194304);
  CHECK(activation_bytes({{8, 1024, 1024}, ir::DType::float16}, spec("S0RS1", mesh2), mesh2) == 2097152);
  CHECK(activation_bytes(big, spec("RRR+P01", mesh2), mesh2) == 33554432);
}

}  // namespace shardsynth::costs
