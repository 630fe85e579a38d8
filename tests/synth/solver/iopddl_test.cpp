// The IOPDDL contest format: problems and solutions in and out, gzip
// included, and bad files rejected with the offending field named.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <zlib.h>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/iopddl.hpp"

namespace shardsynth::synth {
namespace {

// Four nodes on a cycle, one forbidden pair, and memory that binds: without
// the limit the cheapest picks a=0, b=0, c=1, d=0 (usage 9 at time 2).
const char* kSmall = R"({"problem": {
  "name": "small",
  "nodes": {
    "intervals": [[0, 3], [1, 4], [2, 5], [4, 6]],
    "costs": [[1, 4], [2, 2, 7], [5, 1], [3, 0]],
    "usages": [[3, 1], [2, 2, 1], [4, 6], [1, 1]]
  },
  "edges": {
    "nodes": [[0, 1], [1, 2], [2, 3], [3, 0]],
    "costs": [[0, 3, 1, 2, 0, 1000000000000000000],
              [1, 0, 4, 0, 2, 2],
              [0, 5, 0, 0],
              [0, 2, 1, 0]]
  },
  "usage_limit": 8
}})";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("shardsynth_iopddl_" + name)).string();
}

nlohmann::json parse(const std::string& text) { return nlohmann::json::parse(text); }

}  // namespace

TEST_CASE("problem_from_iopddl_ReadsEveryField") {
  const Problem p = problem_from_iopddl(parse(kSmall), "small.json");
  CHECK(p.name == "small");
  REQUIRE(p.nodes.size() == 4);
  CHECK(p.nodes[1].costs == std::vector<int64_t>{2, 2, 7});
  CHECK(p.nodes[2].usages == std::vector<int64_t>{4, 6});
  CHECK(p.nodes[3].live_from == 4);
  CHECK(p.nodes[3].live_to == 6);
  REQUIRE(p.edges.size() == 4);
  CHECK(p.edges[0].from == 0);
  CHECK(p.edges[0].to == 1);
  CHECK(p.edges[0].costs[5] == kForbidden);
  CHECK(p.usage_limit == 8);
  const BruteForceResult limited = brute_force(p);
  Problem free = p;
  free.usage_limit.reset();
  CHECK(brute_force(free).cost < limited.cost);  // the limit binds
}

TEST_CASE("problem_to_iopddl_RoundTrips") {
  const Problem p = problem_from_iopddl(parse(kSmall), "small.json");
  const Problem back = problem_from_iopddl(problem_to_iopddl(p), "round trip");
  CHECK(problem_to_iopddl(back) == problem_to_iopddl(p));
  CHECK(brute_force(back).cost == brute_force(p).cost);
}

TEST_CASE("load_iopddl_ReadsGzipAndPlainFiles") {
  const std::string plain = temp_path("plain.json");
  const std::string packed = temp_path("packed.json.gz");
  common::write_file_atomic(plain, kSmall);
  gzFile out = gzopen(packed.c_str(), "wb");
  REQUIRE(out != nullptr);
  REQUIRE(gzputs(out, kSmall) > 0);
  gzclose(out);
  CHECK(problem_to_iopddl(load_iopddl(plain)) == problem_to_iopddl(load_iopddl(packed)));
  std::remove(plain.c_str());
  std::remove(packed.c_str());
  CHECK_THROWS_WITH_AS(load_iopddl(temp_path("missing.json")), doctest::Contains("missing.json"), common::InputError);
}

TEST_CASE("problem_from_iopddl_BadFilesNameTheField") {
  struct Case {
    std::string from, to, message;
  };
  const Case cases[] = {
      {"\"usage_limit\": 8", "\"usage_limit\": \"lots\"", "usage_limit"},
      {"[[0, 3], [1, 4]", "[[0, 3, 9], [1, 4]", "nodes.intervals[0]"},
      {"[[1, 4], [2, 2, 7]", "[[1, 4], [2, -2, 7]", "nodes.costs[1]"},
      {"[[3, 1], [2, 2, 1]", "[[3, 1], [2, 2]", "nodes.usages[1]"},
      {"[[0, 1], [1, 2]", "[[0, 9], [1, 2]", "edges.nodes[0]"},
      {"[[0, 1], [1, 2]", "[[0, 0], [1, 2]", "edges.nodes[0]"},
      {"[1, 0, 4, 0, 2, 2]", "[1, 0, 4, 0, 2]", "edges.costs[1]"},
      {"\"costs\": [[1, 4]", "\"costs\": [[1.5, 4]", "nodes.costs[0][0]"},
      {"\"edges\": {", "\"edgez\": {", "'edges'"},
  };
  for (const auto& c : cases) {
    std::string text = kSmall;
    const auto at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, c.from.size(), c.to);
    CAPTURE(c.message);
    CHECK_THROWS_WITH_AS(problem_from_iopddl(parse(text), "bad.json"), doctest::Contains(c.message.c_str()), common::InputError);
  }
}

TEST_CASE("solution_from_iopddl_ChecksLengthAndRange") {
  const Problem p = problem_from_iopddl(parse(kSmall), "small.json");
  const Assignment a{1, 2, 0, 1};
  CHECK(solution_from_iopddl(solution_to_iopddl(a), p, "s.json") == a);
  CHECK(solution_to_iopddl(a).dump() == "[1,2,0,1]");
  CHECK_THROWS_WITH_AS(solution_from_iopddl(parse("[1, 2, 0]"), p, "s.json"), doctest::Contains("3 entries for 4 nodes"),
                       common::InputError);
  CHECK_THROWS_WITH_AS(solution_from_iopddl(parse("[1, 3, 0, 1]"), p, "s.json"), doctest::Contains("solution[1] = 3"),
                       common::InputError);
  CHECK_THROWS_AS(solution_from_iopddl(parse("{\"a\": 1}"), p, "s.json"), common::InputError);
}

}  // namespace shardsynth::synth
