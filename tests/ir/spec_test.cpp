#include <doctest/doctest.h>

#include "ir/error.hpp"
#include "ir/spec.hpp"

using namespace shardsynth::ir;

TEST_CASE("parse_spec_RoundTripOneDimensionalMesh") {
  for (std::string text : {"RR", "RS", "SR", "R", "S", "RRR", "RSR", "RR+P", "RRR+P"}) {
    CAPTURE(text);
    CHECK(to_string(parse_spec(text, 1), 1) == text);
  }
}

TEST_CASE("parse_spec_RoundTripTwoDimensionalMesh") {
  for (std::string text : {"S0RS1", "RS01", "S10R", "RR+P0", "S0R+P1", "RR+P01", "RRR"}) {
    CAPTURE(text);
    CHECK(to_string(parse_spec(text, 2), 2) == text);
  }
}

TEST_CASE("parse_spec_Structure") {
  const Spec spec = parse_spec("S1RS0+P2", 3);
  REQUIRE(spec.rank() == 3);
  CHECK(spec.dims[0] == std::vector<int>{1});
  CHECK(spec.dims[1].empty());
  CHECK(spec.dims[2] == std::vector<int>{0});
  CHECK(spec.partial.empty() == false);
  CHECK(parse_spec("RS", 1) == Spec{{{}, {0}}, {}, {}});
  CHECK(parse_spec("RR+P", 1).partial == std::vector<int>{0});
  // A scalar (the loss) has no dim tokens.
  CHECK(parse_spec("", 2) == replicated(0));
  CHECK(parse_spec("+P01", 2) == Spec{{}, {0, 1}, {}});
  CHECK(to_string(Spec{{}, {0, 1}, {}}, 2) == "+P01");
}

TEST_CASE("parse_spec_RejectsMalformedText") {
  for (std::string text : {"RX", "S2R", "SS", "RR+", "RR+Q", "RR+P0x", "S0S0", "+"}) {
    CAPTURE(text);
    CHECK_THROWS_AS(parse_spec(text, 2), InputError);
  }
  CHECK_THROWS_AS(parse_spec("SR", 2), InputError);  // N-D meshes need axis numbers
  CHECK_THROWS_WITH_AS(parse_spec("RQ", 1), doctest::Contains("'RQ'"), InputError);
}

TEST_CASE("local_shape_DividesShardedDims") {
  const Mesh mesh = parse_mesh("2x4");
  CHECK(local_shape({8, 1024, 4096}, parse_spec("S0RS1", 2), mesh) == std::vector<int64_t>{4, 1024, 1024});
  CHECK(local_shape({8, 1024, 4096}, parse_spec("RS01", 2), mesh) == std::vector<int64_t>{8, 1024, 512});
  // A spec describing the trailing dims leaves the leading dims whole.
  CHECK(local_shape({8, 1024, 4096}, parse_spec("SR", 1), parse_mesh("8")) == std::vector<int64_t>{8, 128, 4096});
  CHECK_THROWS_AS(local_shape({6, 4}, parse_spec("SR", 1), parse_mesh("4")), InputError);
}

TEST_CASE("permute_ReordersDims") {
  CHECK(to_string(permute(parse_spec("SR", 1), {1, 0})) == "RS");
}
