// costs::storage_cost and storage_bytes: a parameter stored apart from its
// use (ZeRO stages 0 to 3), priced by the alpha-beta model (hand-computed).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "costs/alpha_beta_cost_model.hpp"
#include "costs/param_storage.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"

namespace shardsynth::costs {
namespace {

// float32 [1024, 1024]: 4 MiB, 1 Mi elements.
const ir::TensorType kSquare{{1024, 1024}, ir::DType::float32};
const ir::Mesh kMesh = ir::parse_mesh("8");

// On mesh "8" (200 bytes/ns, 1000 ns per step), for kSquare:
constexpr int64_t kAllReduce8 = 50700;      // 14000 + 2 * 7/8 * 4 MiB / 200
constexpr int64_t kAllGather8 = 25350;      // 7000 + 7/8 * 4 MiB / 200
constexpr int64_t kReduceScatter8 = 25350;  // the same volume as the all-gather

ir::Spec spec(const std::string& text) { return ir::parse_spec(text, 1); }

int64_t cost(const std::string& stored, const std::string& grad, const std::string& state, const OperandUse& use) {
  const AlphaBetaCostModel model;
  return storage_cost(model, {spec(stored), spec(grad), spec(state)}, use, kMesh).value();
}

}  // namespace

TEST_CASE("storage_cost_ZeroStagesOfADataParallelWeight") {
  // Read replicated by a batch-sharded op: its gradient is partial on axis 0.
  const OperandUse use{kSquare, spec("RR"), {0}};
  CHECK(cost("RR", "RR", "RR", use) == kAllReduce8);                        // DDP: the all-reduce
  CHECK(cost("RR", "RR", "SR", use) == kAllReduce8 + kAllGather8);          // ZeRO-1: all-reduce, slice, gather the update
  CHECK(cost("RR", "SR", "SR", use) == kReduceScatter8 + kAllGather8);      // ZeRO-2: reduce-scatter instead
  CHECK(cost("SR", "SR", "SR", use) == 2 * kAllGather8 + kReduceScatter8);  // FSDP: gathered for forward and backward, updated in place
}

TEST_CASE("storage_cost_TensorParallelWeightStoredAsUsed") {
  // Column-parallel, no data parallelism: nothing to reduce or gather.
  CHECK(cost("RS", "RS", "RS", OperandUse{kSquare, spec("RS"), {}}) == 0);
  // Stored sharded the other way: an all-to-all before each use, and the gradient back.
  const AlphaBetaCostModel model;
  const int64_t swap = *model.reshard_cost(kSquare, spec("SR"), spec("RS"), kMesh);
  const int64_t back = *model.reshard_cost(kSquare, spec("RS"), spec("SR"), kMesh);
  CHECK(swap > 0);
  CHECK(cost("SR", "SR", "SR", OperandUse{kSquare, spec("RS"), {}}) == 2 * swap + back);  // the gradient goes back once
}

TEST_CASE("storage_bytes_ParameterGradientAndAdamState") {
  constexpr int64_t kElements = 1024 * 1024;
  auto bytes = [](const std::string& stored, const std::string& grad, const std::string& state) {
    return storage_bytes(kSquare, {spec(stored), spec(grad), spec(state)}, kMesh);
  };
  const StorageBytes ddp = bytes("RR", "RR", "RR");
  CHECK(ddp.param == 4 * kElements);
  CHECK(ddp.grad == 4 * kElements);
  CHECK(ddp.state == 8 * kElements);
  CHECK(ddp.total() == param_bytes(Mode::training, kSquare, spec("RR"), kMesh));
  const StorageBytes zero1 = bytes("RR", "RR", "SR");
  CHECK(zero1.total() == 4 * kElements + 4 * kElements + kElements);
  const StorageBytes zero2 = bytes("RR", "SR", "SR");
  CHECK(zero2.total() == 4 * kElements + kElements / 2 + kElements);
  const StorageBytes fsdp = bytes("SR", "SR", "SR");
  CHECK(fsdp.total() == ddp.total() / 8);
}

}  // namespace shardsynth::costs
