// The printed per-stage and transfer tables, golden-tested.
#include <doctest/doctest.h>

#include "golden.hpp"
#include "ir/staged_schedule.hpp"
#include "synth/stages/stage_report.hpp"

using namespace shardsynth;

namespace {

ir::StagedSchedule two_stages() {
  ir::StagedSchedule s;
  s.mesh = {2, 2};
  s.cost_model = "alpha-beta";
  s.balance = "cost";
  s.micro_batches = 4;
  ir::Stage a;
  a.index = 0;
  a.nodes = {"x", "fc1", "gelu"};
  a.compute = 1200;
  a.communication = 300;
  a.memory = 4096;
  a.params = 1024;
  a.schedule.cost = 1300;
  a.schedule.proven_optimal = true;
  a.schedule.directives.push_back({ir::DirectiveKind::shard, "fc1", "weight", 0, 1, {}, "", "", -1});
  ir::Stage b;
  b.index = 1;
  b.nodes = {"fc2", "output"};
  b.compute = 1100;
  b.communication = 50;
  b.memory = 2048;
  b.params = 1024;
  b.schedule.cost = 1150;
  s.stages = {a, b};
  s.transfers = {{"gelu", 0, 1, "RR", 1024, 200}};
  s.bottleneck = 1500;
  return s;
}

}  // namespace

TEST_CASE("format_stage_table_Golden") {
  CHECK(synth::format_stage_table(two_stages(), "ns") + "\n" == testing::golden("stage_table.txt"));
}

TEST_CASE("stage_report_TablesSummaryAndDirectives") {
  synth::StagePlan plan;
  plan.schedule = two_stages();
  plan.pipeline_time = 1500 + 1150 + 3 * 1500;
  CHECK(synth::stage_report(plan, "ns") == testing::golden("stage_report.txt"));
}
