#include <doctest/doctest.h>

#include "synth/solver/edge_classes.hpp"

using namespace shardsynth::synth;

namespace {

// Two nodes of 4 and 3 strategies and one edge between them.
Problem two_nodes(std::vector<int64_t> table) {
  Problem p{"two", {}, {}, std::nullopt};
  p.nodes = {{"a", {0, 0, 0, 0}, {}, 0, 0}, {"b", {0, 0, 0}, {}, 0, 0}};
  p.edges = {{0, 1, std::move(table)}};
  return p;
}

}  // namespace

TEST_CASE("edge_classes_GroupsRowsAndColumnsEqualOverTheAllowedStrategies") {
  const Problem p = two_nodes({
      5, 0, 5,           // row 0
      7, kForbidden, 7,  // row 1
      5, 0, 5,           // row 2: equal to row 0
      7, kForbidden, 9,  // row 3: equal to row 1 but in column 2
  });
  const EdgeClasses all = edge_classes(p, p.edges[0], {false, false, false, false}, {false, false, false});
  CHECK(all.row_class == std::vector<int>{0, 1, 0, 2});
  CHECK(all.row_members == std::vector<std::vector<int>>{{0, 2}, {1}, {3}});
  CHECK(all.col_class == std::vector<int>{0, 1, 2});  // column 2 differs from 0 in row 3
  CHECK(all.costs == std::vector<int64_t>{5, 0, 5, 7, kForbidden, 7, 7, kForbidden, 9});
  // 8 nonzero entries, and the class {0, 2} links its two members.
  CHECK(encoded_terms(all) == 8 + 2);

  // Without column 2, rows 1 and 3 are equal too.
  const EdgeClasses banned = edge_classes(p, p.edges[0], {false, false, false, false}, {false, false, true});
  CHECK(banned.row_members == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
  CHECK(banned.col_class == std::vector<int>{0, 1, -1});
  CHECK(banned.costs == std::vector<int64_t>{5, 0, 7, kForbidden});
  CHECK(encoded_terms(banned) == 3 + 2 + 2);

  // A banned row is in no class.
  const EdgeClasses no_row = edge_classes(p, p.edges[0], {true, false, false, false}, {false, false, false});
  CHECK(no_row.row_class == std::vector<int>{-1, 0, 1, 2});
  CHECK(no_row.row_members == std::vector<std::vector<int>>{{1}, {2}, {3}});
}

TEST_CASE("edge_classes_ColumnsOfEqualEntriesShareAClassAndAZeroTableNeedsNoTerm") {
  const Problem p = two_nodes({
      1, 1, 2,  //
      3, 3, 4,  //
      1, 1, 2,  //
      0, 0, 0,  //
  });
  const EdgeClasses c = edge_classes(p, p.edges[0], {false, false, false, false}, {false, false, false});
  CHECK(c.col_members == std::vector<std::vector<int>>{{0, 1}, {2}});
  CHECK(c.costs == std::vector<int64_t>{1, 2, 3, 4, 0, 0});
  // 4 nonzero entries; the row class {0, 2} and the column class {0, 1} are used, the zero row {3} is not.
  CHECK(encoded_terms(c) == 4 + 2 + 2);
  const Problem zero = two_nodes(std::vector<int64_t>(12, 0));
  CHECK(encoded_terms(edge_classes(zero, zero.edges[0], {false, false, false, false}, {false, false, false})) == 0);
}
