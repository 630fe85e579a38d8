#include <doctest/doctest.h>

#include "ir/error.hpp"
#include "ir/schedule.hpp"

using namespace shardsynth::ir;

namespace {
Schedule sample() {
  Schedule s{{8}, "slapo", 131072, true, {}, {{"fc1", "SR"}, {"fc1.weight", "RR"}}};
  s.directives.push_back({DirectiveKind::shard, "fc1", "weight", 0, 1, {}, "", "", -1});
  s.directives.push_back({DirectiveKind::sync, "fc1", "", -1, 1, {}, "fwd_pre", "RR->SR", -1});
  s.directives.push_back({DirectiveKind::sync, "add", "", -1, 1, {}, "fwd_pre", "RS->RR", 1});
  s.directives.push_back({DirectiveKind::shard, "h.0.attn.c_attn", "weight", 1, 3, {0, 1}, "", "", -1});
  return s;
}
}  // namespace

TEST_CASE("to_text_SlapoSyntax") {
  const Schedule s = sample();
  CHECK(to_text(s.directives[0]) == "sch[\"fc1\"].shard(\"weight\", dim=0)");
  CHECK(to_text(s.directives[1]) == "sch[\"fc1\"].sync(mode=\"fwd_pre\", sync_op_or_fn=\"RR->SR\")");
  CHECK(to_text(s.directives[2]) == "sch[\"add\"].sync(mode=\"fwd_pre\", sync_op_or_fn=\"RS->RR\", arg=1)");
  CHECK(to_text(s.directives[3]) == "sch[\"h.0.attn.c_attn\"].shard(\"weight\", dim=1, blocks=3, axes=[0, 1])");
}

TEST_CASE("schedule_from_json_RoundTrip") {
  const Schedule s = sample();
  CHECK(schedule_from_json(to_json(s)) == s);
  CHECK(schedule_from_json(nlohmann::json::parse(to_json(s).dump())) == s);
}

TEST_CASE("schedule_from_json_NamesBadField") {
  nlohmann::json j = to_json(sample());
  j["directives"][1].erase("mode");
  CHECK_THROWS_WITH_AS(schedule_from_json(j), doctest::Contains("directive 1 lacks field 'mode'"), InputError);
  j = to_json(sample());
  j["cost"] = "cheap";
  CHECK_THROWS_WITH_AS(schedule_from_json(j), doctest::Contains("'cost'"), InputError);
  j = to_json(sample());
  j["directives"][0]["kind"] = "pipeline";
  CHECK_THROWS_WITH_AS(schedule_from_json(j), doctest::Contains("'pipeline'"), InputError);
}

TEST_CASE("schedule_from_json_IntegerFieldsTakeIntegersInRangeOnly") {
  // Found by fuzzing: a float beyond int64 in an integer list was converted
  // to int64 (undefined behaviour; UBSan's float-cast-overflow).
  nlohmann::json j = to_json(sample());
  j["mesh"] = nlohmann::json::parse("[2, 22322222222222222222.25]");
  CHECK_THROWS_WITH_AS(schedule_from_json(j),
                       doctest::Contains("field 'mesh' of the top level must be a list of integers from "
                                         "-9223372036854775808 to 9223372036854775807"),
                       InputError);
  j = to_json(sample());
  j["mesh"] = nlohmann::json::parse("[8.0]");  // integral, but a float
  CHECK_THROWS_WITH_AS(schedule_from_json(j), doctest::Contains("'mesh'"), InputError);
  j = to_json(sample());
  j["cost"] = nlohmann::json::parse("18446744073709551615");  // above int64
  CHECK_THROWS_WITH_AS(schedule_from_json(j), doctest::Contains("field 'cost' of the top level must be an integer"),
                       InputError);
  j = to_json(sample());
  j["directives"][0]["dim"] = 3000000000;  // above int
  CHECK_THROWS_WITH_AS(schedule_from_json(j),
                       doctest::Contains("must be an integer from -2147483648 to 2147483647"), InputError);
}

TEST_CASE("schedule_from_json_MemoryTensorsRoundTrip") {
  Schedule s = sample();
  ScheduleMemory m;
  m.params = 64;
  m.peak = 96;
  m.peak_at = "forward of fc1";
  m.tensors.push_back({"fc1", MemoryCategory::activation, 32, {{1, 3}}});
  m.tensors.push_back({"fc1.weight:state", MemoryCategory::optimizer, 64, {{0, 2}, {4, 5}}});
  s.memory = m;
  CHECK(schedule_from_json(nlohmann::json::parse(to_json(s).dump())) == s);
  nlohmann::json j = to_json(s);
  CHECK(j["memory"]["tensors"][1]["live"] == nlohmann::json::parse("[[0, 2], [4, 5]]"));
  j["memory"]["tensors"][0]["category"] = "weights";
  CHECK_THROWS_WITH_AS(schedule_from_json(j), doctest::Contains("memory tensor 'fc1': unknown category 'weights'"),
                       InputError);
  j = to_json(s);
  j["memory"]["tensors"][0]["live"] = nlohmann::json::parse("[[3, 1]]");
  CHECK_THROWS_WITH_AS(schedule_from_json(j), doctest::Contains("from <= to"), InputError);
}
