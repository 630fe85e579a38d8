// MpiCommunicator: every collective along every mesh axis against a locally
// computed expectation, plain and blocked, and its byte accounting.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "runtime/half.hpp"
#include "runtime/mpi_communicator.hpp"
#include "runtime/packing.hpp"
#include "tests/runtime/mpi_test_util.hpp"

namespace shardsynth::runtime {
namespace {

using costs::CollectiveKind;
using testing::global_tensor;
using testing::scaled;
using testing::test_meshes;

constexpr int64_t kFloatBytes = 4;

// A seed shared by the members of this rank's group along `axis` (the other
// coordinates), so each group works on its own global tensor.
int group_seed(const std::vector<int>& coords, int axis) {
  int seed = 1;
  for (std::size_t a = 0; a < coords.size(); ++a) {
    if (static_cast<int>(a) != axis) seed = seed * 17 + coords[a] + 1;
  }
  return seed;
}

std::string mesh_name(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t e : shape) s += (s.empty() ? "" : "x") + std::to_string(e);
  return s;
}

int64_t bytes(const Tensor& t) { return t.numel() * kFloatBytes; }

TEST_CASE("MpiCommunicator_CoordsRowMajorGroupsByCoordinate") {
  for (const auto& shape : test_meshes()) {
    CAPTURE(mesh_name(shape));
    MpiCommunicator comm(shape);
    CHECK(comm.size() == testing::world_size());
    std::vector<int> expected(shape.size());
    int rest = comm.rank();
    for (int a = static_cast<int>(shape.size()) - 1; a >= 0; --a) {
      expected[a] = rest % static_cast<int>(shape[a]);
      rest /= static_cast<int>(shape[a]);
    }
    CHECK(comm.coords() == expected);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      // Each member contributes its own coordinate; the gather lists 0..n-1.
      Tensor mine{{1}, {static_cast<float>(comm.coords()[axis])}};
      const Tensor all = comm.all_gather(mine, 0, axis);
      Tensor want = zeros({shape[axis]});
      for (int64_t j = 0; j < shape[axis]; ++j) want.data[j] = static_cast<float>(j);
      CHECK(all == want);
    }
    comm.barrier();
  }
}

TEST_CASE("all_gather_AndReduceScatterEveryDimPlainAndBlocked") {
  for (const auto& shape : test_meshes()) {
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      for (int dim = 0; dim < 3; ++dim) {
        for (int64_t blocks : {1, 3}) {
          CAPTURE(mesh_name(shape));
          CAPTURE(axis);
          CAPTURE(dim);
          CAPTURE(blocks);
          MpiCommunicator comm(shape);
          const int64_t n = shape[axis];
          const int64_t c = comm.coords()[axis];
          const Tensor global = global_tensor({3 * n, 6 * n, 2 * 3 * n}, group_seed(comm.coords(), axis));

          const Tensor gathered = comm.all_gather(slice_part(global, dim, n, c, blocks), dim, axis, blocks);
          CHECK(gathered == global);

          // Member j holds (j + 1) * global; the sum is n(n+1)/2 * global.
          const Tensor summand = scaled(global, static_cast<float>(c + 1));
          const Tensor scattered = comm.reduce_scatter(summand, dim, axis, blocks);
          const Tensor total = scaled(global, static_cast<float>(n * (n + 1) / 2));
          CHECK(scattered == slice_part(total, dim, n, c, blocks));

          const std::map<CollectiveKind, int64_t> want = {
              {CollectiveKind::all_gather, (n - 1) * bytes(global) / n},
              {CollectiveKind::reduce_scatter, (n - 1) * bytes(global) / n},
          };
          CHECK(comm.bytes_sent() == want);
        }
      }
    }
  }
}

TEST_CASE("all_reduce_SumsOverTheAxisGroup") {
  for (const auto& shape : test_meshes()) {
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      CAPTURE(mesh_name(shape));
      CAPTURE(axis);
      MpiCommunicator comm(shape);
      const int64_t n = shape[axis];
      const int64_t c = comm.coords()[axis];
      const Tensor global = global_tensor({5, 7}, group_seed(comm.coords(), axis));
      const Tensor sum = comm.all_reduce(scaled(global, static_cast<float>(c + 1)), axis);
      CHECK(sum == scaled(global, static_cast<float>(n * (n + 1) / 2)));
      const std::map<CollectiveKind, int64_t> want = {
          {CollectiveKind::all_reduce, 2 * (n - 1) * bytes(global) / n}};
      CHECK(comm.bytes_sent() == want);
    }
  }
}

TEST_CASE("all_to_all_MovesTheAxisPlainAndBlocked") {
  struct Case {
    int src_dim;         // tensor dim the axis leaves
    int dst_dim;         // tensor dim the axis comes to
    int64_t src_blocks;  // block count of src_dim
    int64_t dst_blocks;  // block count of dst_dim
  };
  const Case cases[] = {{0, 1, 1, 1}, {1, 0, 1, 1}, {2, 0, 1, 1}, {1, 2, 1, 3}, {2, 1, 3, 1}, {0, 2, 3, 3}};
  for (const auto& shape : test_meshes()) {
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      for (const Case& k : cases) {
        CAPTURE(mesh_name(shape));
        CAPTURE(axis);
        CAPTURE(k.src_dim);
        CAPTURE(k.dst_dim);
        CAPTURE(k.src_blocks);
        CAPTURE(k.dst_blocks);
        MpiCommunicator comm(shape);
        const int64_t n = shape[axis];
        const int64_t c = comm.coords()[axis];
        const Tensor global = global_tensor({3 * n, 6 * n, 3 * n}, group_seed(comm.coords(), axis));
        const Tensor local = slice_part(global, k.src_dim, n, c, k.src_blocks);
        const Tensor moved = comm.all_to_all(local, k.src_dim, k.dst_dim, axis, k.dst_blocks, k.src_blocks);
        CHECK(moved == slice_part(global, k.dst_dim, n, c, k.dst_blocks));
        const std::map<CollectiveKind, int64_t> want = {{CollectiveKind::all_to_all, (n - 1) * bytes(local) / n}};
        CHECK(comm.bytes_sent() == want);
      }
    }
  }
}

// A bfloat16 or float16 tensor travels as 16-bit patterns: 2 bytes an
// element, sums rounded to the dtype, every member with the same bits.
TEST_CASE("half_CollectivesSendTwoBytesAnElement") {
  for (const auto& shape : test_meshes()) {
    for (ir::DType dtype : {ir::DType::bfloat16, ir::DType::float16}) {
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        CAPTURE(mesh_name(shape));
        CAPTURE(axis);
        CAPTURE(ir::dtype_name(dtype));
        MpiCommunicator comm(shape);
        const int64_t n = shape[axis];
        const int64_t c = comm.coords()[axis];
        Tensor ones = zeros({4, 2 * n});
        for (float& v : ones.data) v = static_cast<float>(c + 1);  // small integers: every sum is exact
        round_in_place(ones, dtype);  // 16-bit storage
        const Tensor sum = comm.all_reduce(ones, axis);
        CHECK(sum.dtype == dtype);
        CHECK(sum.data.empty());  // received into 16-bit storage
        REQUIRE(sum.bits.size() == static_cast<std::size_t>(ones.numel()));
        for (uint16_t v : sum.bits) CHECK(v == half_bits(static_cast<float>(n * (n + 1) / 2), dtype));
        const Tensor gathered = comm.all_gather(ones, 1, axis);
        CHECK(gathered.dtype == dtype);
        CHECK(gathered.shape == std::vector<int64_t>{4, 2 * n * n});
        CHECK(element(gathered, static_cast<std::size_t>(2 * n * n - 1)) == static_cast<float>(n));
        const Tensor scattered = comm.reduce_scatter(ones, 1, axis);
        CHECK(scattered.shape == std::vector<int64_t>{4, 2});
        CHECK(element(scattered, 0) == static_cast<float>(n * (n + 1) / 2));
        const Tensor swapped = comm.all_to_all(ones, 0, 1, axis);
        CHECK(swapped.dtype == dtype);
        CHECK(swapped.bits.size() == static_cast<std::size_t>(ones.numel()));
        const int64_t b = ones.numel() * 2;  // bytes of the tensor at 2 per element
        const std::map<CollectiveKind, int64_t> want = {{CollectiveKind::all_reduce, 2 * (n - 1) * b / n},
                                                        {CollectiveKind::all_gather, (n - 1) * b},
                                                        {CollectiveKind::reduce_scatter, (n - 1) * b / n},
                                                        {CollectiveKind::all_to_all, (n - 1) * b / n}};
        CHECK(comm.bytes_sent() == want);
      }
    }
  }
}

TEST_CASE("pack_parts_RoundTripsThroughTheExchangeLayout") {
  const Tensor t = global_tensor({4, 8, 12}, 3);
  for (int dim = 0; dim < 3; ++dim) {
    for (int64_t blocks : {1, 2}) {
      const int64_t parts = 2;
      const Tensor packed = pack_parts(t, dim, parts, blocks);
      CHECK(packed.data.size() == t.data.size());
      CHECK(unpack_parts(packed, part_shape(t.shape, dim, parts), dim, parts, blocks) == t);
    }
  }
}

}  // namespace
}  // namespace shardsynth::runtime

namespace shardsynth::runtime {
namespace {

// The two cases below kill the job on purpose, so they are skipped in the
// normal run; ctest runs each alone with --no-skip and expects its message
// (tests/CMakeLists.txt: runtime_mpi/wrong_mesh_aborts, runtime_mpi/abort).
TEST_CASE("MpiCommunicator_WrongMeshAbortsEveryRank" * doctest::skip()) {
  MpiCommunicator comm({testing::world_size() + 1});
}

TEST_CASE("abort_OneRankEndsEveryRank" * doctest::skip()) {
  MpiCommunicator comm({testing::world_size()});
  if (comm.rank() == 0) comm.abort("deliberate abort from rank 0");
  comm.barrier();  // the other ranks wait here until the abort ends them
}

}  // namespace
}  // namespace shardsynth::runtime
