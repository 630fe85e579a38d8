#include <doctest/doctest.h>

#include "ir/error.hpp"
#include "ir/mesh.hpp"

using namespace shardsynth::ir;

TEST_CASE("parse_mesh_OneAndTwoDimensional") {
  const Mesh one = parse_mesh("8");
  CHECK(one.shape == std::vector<int64_t>{8});
  CHECK(one.num_devices() == 8);
  CHECK(one.bandwidth_gbps.size() == 1);
  const Mesh two = parse_mesh("2x4");
  CHECK(two.shape == std::vector<int64_t>{2, 4});
  CHECK(two.num_devices() == 8);
  CHECK(mesh_string(two) == "2x4");
}

TEST_CASE("parse_mesh_RejectsBadText") {
  for (std::string text : {"", "0", "-2", "x4", "2x", "2x4x2", "abc", "8 ", "99999999999999999999", "70000"}) {
    CAPTURE(text);
    CHECK_THROWS_AS(parse_mesh(text), InputError);
  }
  CHECK_THROWS_WITH_AS(parse_mesh("2y4"), doctest::Contains("'2y4'"), InputError);
}
