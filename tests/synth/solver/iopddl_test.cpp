// The IOPDDL contest format: problems and solutions in and out, gzip
// included, and bad files rejected with the offending field named.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <zlib.h>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/json_field.hpp"
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

std::string iopddl_dir() { return SHARDSYNTH_IOPDDL_DIR; }

void write_gz(const std::string& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "wb");
  REQUIRE(out != nullptr);
  REQUIRE(gzwrite(out, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
  gzclose(out);
}

// Every field of two problems, labels included.
void check_same(const Problem& a, const Problem& b) {
  CHECK(a.name == b.name);
  CHECK(a.usage_limit == b.usage_limit);
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    CAPTURE(i);
    CHECK(a.nodes[i].label == b.nodes[i].label);
    CHECK(a.nodes[i].costs == b.nodes[i].costs);
    CHECK(a.nodes[i].usages == b.nodes[i].usages);
    CHECK(a.nodes[i].live_from == b.nodes[i].live_from);
    CHECK(a.nodes[i].live_to == b.nodes[i].live_to);
  }
  REQUIRE(a.edges.size() == b.edges.size());
  for (std::size_t e = 0; e < a.edges.size(); ++e) {
    CAPTURE(e);
    CHECK(a.edges[e].from == b.edges[e].from);
    CHECK(a.edges[e].to == b.edges[e].to);
    CHECK(a.edges[e].costs == b.edges[e].costs);
  }
}

// What the document reader says of a file: the problem, or its message.
Problem read_with_json(const std::string& path) { return problem_from_iopddl(parse(common::read_file_gz(path)), path); }

// The message the document reader gives for `text` read from `where` ("" when it reads).
std::string json_message(const std::string& text, const std::string& where) {
  try {
    problem_from_iopddl(parse(text), where);
  } catch (const nlohmann::json::exception& e) {
    return where + ": not valid JSON (" + common::json_parse_failure(e) + ")";
  } catch (const common::InputError& e) {
    return e.what();
  }
  return "";
}

// The message the streaming reader gives for the file `path` ("" when it reads).
std::string stream_message(const std::string& path) {
  try {
    load_iopddl(path);
  } catch (const common::InputError& e) {
    return e.what();
  }
  return "";
}

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

TEST_CASE("load_iopddl_StreamsTheSameProblemAsTheDocumentReader") {
  const std::string example = iopddl_dir() + "/example.json";
  if (!std::filesystem::exists(example)) return;  // the contest files are not in this checkout
  check_same(load_iopddl(example), read_with_json(example));
  const std::string packed = temp_path("example.json.gz");
  write_gz(packed, common::read_file_gz(example));
  check_same(load_iopddl(packed), read_with_json(example));
  std::remove(packed.c_str());
  const std::string small = temp_path("small.json");
  common::write_file_atomic(small, kSmall);
  check_same(load_iopddl(small), problem_from_iopddl(parse(kSmall), small));
  std::remove(small.c_str());
#if SHARDSYNTH_HAVE_IOPDDL
  const std::string b = iopddl_dir() + "/asplos-2025-iopddl-B.json.gz";
  check_same(load_iopddl(b), read_with_json(b));
#endif
}

TEST_CASE("load_iopddl_BadFilesGiveTheDocumentReadersMessage") {
  struct Case {
    std::string from, to, field;
  };
  const Case cases[] = {
      {"\"usage_limit\": 8\n}}", "\"usage_limit\": 8\n}", "not valid JSON (byte"},  // truncated
      {"\"usage_limit\": 8\n}}", "\"usage_limit\": 8\n}} x", "not valid JSON (byte"},  // trailing text
      {"\"usage_limit\": 8", "\"usage_limit\": 1E400", "beyond the range of a double"},
      {"[1, 0, 4, 0, 2, 2]", "[1, 0, 4, 0, 2]", "edges.costs[1] has 5 entries, expected 6"},
      {"[[0, 1], [1, 2]", "[[0, 9], [1, 2]", "edges.nodes[0] names node 9 of 4"},
      {"[[1, 4], [2, 2, 7]", "[[1, 4], [2, -2, 7]", "nodes.costs[1] holds the negative cost -2"},
      {"\"edges\": {", "\"edgez\": {", "problem: missing 'edges'"},
      {"\"usages\": [[3, 1]", "\"usagez\": [[3, 1]", "nodes: missing 'usages'"},
      {"[[1, 4], [2, 2, 7]", "[[1, {\"b\": [2], \"a\": null}], [2, 2, 7]", "nodes.costs[0][1]: expected an integer, got {\"a\":null,\"b\":[2]}"},
      {"[[1, 4], [2, 2, 7]", "[[1, 4], 7", "nodes.costs[1]: expected an array"},
      {"[[3, 1], [2, 2, 1]", "[[3, 1], [2, 2, 1000000000000000001]", "nodes.usages[1][2]: 1000000000000000001 is above 10^18"},
      {"\"usage_limit\": 8", "\"usage_limit\": [8]", "usage_limit: expected an integer, got [8]"},
      {"\"usage_limit\": 8", "\"usage_limit\": -8", "usage_limit -8 is negative"},
      {"\"intervals\": [[0, 3]", "\"intervals\": {}, \"intervals\": [[0, 3]", ""},  // the last of two keys counts
      {"\"intervals\": [[0, 3], [1, 4], [2, 5], [4, 6]]", "\"intervals\": 5", "nodes.intervals: expected an array"},
      {"\"name\": \"small\"", "\"name\": \"small\", \"extra\": {\"nodes\": 1}", ""},  // unknown keys are ignored
  };
  const std::string path = temp_path("bad.json");
  for (const auto& c : cases) {
    std::string text = kSmall;
    const auto at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, c.from.size(), c.to);
    CAPTURE(text);
    common::write_file_atomic(path, text);
    const std::string expected = json_message(text, path);
    CHECK(stream_message(path) == expected);
    if (c.field.empty()) {
      CHECK(expected.empty());
    } else {
      CHECK(expected.find(c.field) != std::string::npos);
    }
  }
  for (const std::string text : {"[]", "{\"problem\": 3}", "{\"problem\": {\"nodes\": []}}", "{\"problem\": {\"nodes\": 1}, \"problem\": {}}", ""}) {
    CAPTURE(text);
    common::write_file_atomic(path, text);
    const std::string expected = json_message(text, path);
    CHECK(!expected.empty());
    CHECK(stream_message(path) == expected);
  }
  std::remove(path.c_str());
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
