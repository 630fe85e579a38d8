// Point-to-point send/recv, the stage group communicator and run_staged on
// 2, 4 and 8 MPI ranks.
#include <doctest/doctest.h>

#include <stdexcept>

#include "ir/models.hpp"
#include "runtime/mpi_communicator.hpp"
#include "runtime/reference.hpp"
#include "runtime/shard_run_staged.hpp"
#include "runtime/stage_communicator.hpp"
#include "tests/runtime/mpi_test_util.hpp"
#include "tests/runtime/staged_test_util.hpp"

namespace shardsynth::runtime {
namespace {

using costs::CollectiveKind;
using testing::global_tensor;
using testing::world_size;

TEST_CASE("MpiCommunicator_SendRecvAroundARing") {
  MpiCommunicator comm({world_size()});
  const int n = comm.size(), me = comm.rank();
  const Tensor mine = global_tensor({3, 5}, me);
  const int next = (me + 1) % n, previous = (me + n - 1) % n;
  Tensor got;
  // Even ranks send first, odd ranks receive first: no rank waits on itself.
  if (me % 2 == 0) {
    comm.send(mine, next);
    got = comm.recv({3, 5}, previous);
  } else {
    got = comm.recv({3, 5}, previous);
    comm.send(mine, next);
  }
  CHECK(got == global_tensor({3, 5}, previous));
  CHECK(comm.p2p_bytes_sent() == 3 * 5 * 4);
  CHECK(comm.bytes_sent().empty());
  CHECK_THROWS_AS(comm.send(mine, me), std::invalid_argument);
  CHECK_THROWS_AS(comm.recv({1}, n), std::invalid_argument);
  comm.barrier();
}

TEST_CASE("MpiCommunicator_RecvOfTheWrongSizeThrows") {
  MpiCommunicator comm({world_size()});
  if (comm.rank() == 0) comm.send(Tensor{{2}, {1, 2}}, 1);
  if (comm.rank() == 1) CHECK_THROWS_WITH_AS(comm.recv({3}, 0), doctest::Contains("expected 3 elements from rank 0 but got 2"), std::runtime_error);
  comm.barrier();
}

TEST_CASE("StageCommunicator_GroupIsTheSubMesh") {
  const int n = world_size();
  std::vector<std::vector<int64_t>> meshes = {{n}};
  if (n >= 4) meshes.push_back({2, n / 2});
  for (const auto& shape : meshes) {
    CAPTURE(shape.size());
    MpiCommunicator comm(shape);
    StageCommunicator group(comm);
    const int members = shape.size() == 1 ? 1 : static_cast<int>(shape[1]);
    CHECK(group.size() == members);
    CHECK(group.mesh_shape() == std::vector<int64_t>{members});
    CHECK(group.rank() == comm.rank() % members);
    CHECK(group.coords() == std::vector<int>{shape.size() == 1 ? 0 : comm.coords()[1]});
    // Each member contributes its stage and group rank; the gather stays inside the stage.
    const Tensor mine{{1, 2}, {static_cast<float>(comm.rank() / members), static_cast<float>(group.rank())}};
    const Tensor all = group.all_gather(mine, 0, 0);
    REQUIRE(all.shape == std::vector<int64_t>{members, 2});
    for (int j = 0; j < members; ++j) {
      CHECK(all.data[2 * j] == static_cast<float>(comm.rank() / members));
      CHECK(all.data[2 * j + 1] == static_cast<float>(j));
    }
    const Tensor sum = group.all_reduce(Tensor{{1}, {1.0f}}, 0);
    CHECK(sum.data[0] == static_cast<float>(members));
    // Bytes: what the whole-mesh communicator counted, here too (a group of one sends none).
    const int64_t expected = members == 1 ? 0 : (members - 1) * 8;
    CHECK(group.bytes_sent().at(CollectiveKind::all_gather) == expected);
    if (members > 1) CHECK(comm.bytes_sent().at(CollectiveKind::all_gather) == expected);
    // Point to point inside the group: member j sends to member j+1.
    if (members > 1) {
      const int me = group.rank();
      if (me + 1 < members) group.send(Tensor{{1}, {static_cast<float>(me)}}, me + 1);
      if (me > 0) CHECK(group.recv({1}, me - 1).data[0] == static_cast<float>(me - 1));
    }
    group.barrier();
    comm.barrier();
  }
}

TEST_CASE("run_staged_MlpMatchesTheReferencePerMicroBatch") {
  const int n = world_size();
  const ir::MlpConfig config{4, 4, 8, 16, ir::DType::float32};
  const ir::Graph mlp = ir::build_mlp(config);
  // 2 stages of n/2 on {2, n/2}; on 2 ranks, 2 stages of one device on {2}.
  const std::vector<int64_t> mesh = n == 2 ? std::vector<int64_t>{2} : std::vector<int64_t>{2, n / 2};
  const ir::StagedSchedule staged = testing::replicated_stages(mlp, mesh, {"gelu"});
  validate_staged_schedule(mlp, staged);
  MpiCommunicator comm(mesh);
  const StagedRunResult result = run_staged(mlp, staged, comm, {3, 3});
  const int members = n / 2;
  CHECK(result.stage == comm.rank() / members);
  REQUIRE(result.outputs.size() == 3);
  if (result.stage == 1 && comm.rank() % members != 0) {
    CHECK(result.outputs[0].empty());  // only member 0 of the group keeps the outputs
  } else if (result.stage == 1) {
    for (int m = 0; m < 3; ++m) {
      CAPTURE(m);
      const auto reference = run_reference(mlp, 3, micro_batch_inputs(mlp, 3, m));
      const Tensor& got = result.outputs[m].at("output");
      const Tensor& want = reference.at("output");
      REQUIRE(got.shape == want.shape);
      for (std::size_t i = 0; i < got.data.size(); ++i) CHECK(got.data[i] == doctest::Approx(want.data[i]).epsilon(1e-5));
    }
  }
  if (result.stage == 1) {
    CHECK(result.p2p_sent == 0);
  } else {
    CHECK(result.outputs[0].empty());
    // fc1 [4, 4, 16] whole, three times.
    CHECK(result.p2p_sent == 3 * 4 * 4 * 16 * 4);
    CHECK(result.p2p_scheduled == result.p2p_sent);
  }
  comm.barrier();
}

}  // namespace
}  // namespace shardsynth::runtime
