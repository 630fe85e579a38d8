#include <doctest/doctest.h>

#include <numeric>
#include <stdexcept>

#include "runtime/tensor.hpp"

using namespace shardsynth::runtime;

namespace {
// A tensor of `shape` holding 0, 1, 2, ... in row-major order.
Tensor iota(std::vector<int64_t> shape) {
  Tensor t = zeros(std::move(shape));
  std::iota(t.data.begin(), t.data.end(), 0.0f);
  return t;
}
}  // namespace

TEST_CASE("zeros_ShapeAndValues") {
  const Tensor t = zeros({2, 3});
  CHECK(t.numel() == 6);
  CHECK(t.rank() == 2);
  CHECK(t.data == std::vector<float>(6, 0.0f));
}

TEST_CASE("slice_part_ContiguousParts") {
  const Tensor t = iota({2, 4});
  const Tensor right = slice_part(t, 1, 2, 1);
  CHECK(right.shape == std::vector<int64_t>{2, 2});
  CHECK(right.data == std::vector<float>{2, 3, 6, 7});
  const Tensor bottom = slice_part(t, 0, 2, 1);
  CHECK(bottom.data == std::vector<float>{4, 5, 6, 7});
}

TEST_CASE("slice_part_BlockedThreeBlocks") {
  // Extent 6 = 3 blocks of 2; part 1 of 2 takes the second element of each block.
  const Tensor t = iota({1, 6});
  CHECK(slice_part(t, 1, 2, 1, 3).data == std::vector<float>{1, 3, 5});
  CHECK(slice_part(t, 1, 2, 0, 3).data == std::vector<float>{0, 2, 4});
}

TEST_CASE("concat_parts_RoundTrip") {
  const Tensor t = iota({2, 12, 3});
  for (int dim = 0; dim < 3; ++dim) {
    for (int64_t blocks : {1, 3}) {
      const int64_t extent = t.shape[dim];
      for (int64_t parts : {1, 2, 4}) {
        if (extent % (parts * blocks) != 0) continue;
        std::vector<Tensor> pieces;
        for (int64_t i = 0; i < parts; ++i) pieces.push_back(slice_part(t, dim, parts, i, blocks));
        CHECK(concat_parts(pieces, dim, blocks) == t);
      }
    }
  }
}

TEST_CASE("slice_part_Errors") {
  const Tensor t = iota({2, 6});
  CHECK_THROWS_AS(slice_part(t, 1, 4, 0), std::invalid_argument);     // 6 % 4
  CHECK_THROWS_AS(slice_part(t, 1, 2, 2), std::invalid_argument);     // index out of range
  CHECK_THROWS_AS(slice_part(t, 2, 1, 0), std::invalid_argument);     // dim out of range
  CHECK_THROWS_AS(slice_part(t, 1, 2, 0, 4), std::invalid_argument);  // 6 % (2 * 4)
}

TEST_CASE("concat_parts_Errors") {
  CHECK_THROWS_AS(concat_parts({}, 0), std::invalid_argument);
  CHECK_THROWS_AS(concat_parts({zeros({2, 2}), zeros({2, 3})}, 0), std::invalid_argument);
  CHECK_THROWS_AS(concat_parts({zeros({2, 3})}, 1, 2), std::invalid_argument);
}
