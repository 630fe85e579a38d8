#include <doctest/doctest.h>

#include "golden.hpp"
#include "ir/graph_table.hpp"
#include "ir/models.hpp"
#include "ir/text_table.hpp"

using namespace shardsynth::ir;

TEST_CASE("format_graph_table_MatchesSeedMlp") {
  // The seed's MLP (x [8, 1024, 1024], ffn 4096), logged as the PR logs it.
  CHECK(as_logged(format_graph_table(build_mlp({}))) + "\n" == shardsynth::testing::golden("mlp_graph_table.txt"));
}

TEST_CASE("format_table_WidthsFromHeadersAndCells") {
  CHECK(format_table({"a", "bb"}, {{"long cell", "x"}, {"y", ""}}) ==
        "a          bb\n"
        "---------  ----\n"
        "long cell  x\n"
        "y");
}
