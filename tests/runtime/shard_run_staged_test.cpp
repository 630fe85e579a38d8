// validate_staged_schedule refuses what the staged runtime cannot run, naming
// the stage and tensor; micro-batch inputs are seeded per micro-batch.
#include <doctest/doctest.h>

#include "ir/error.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"
#include "runtime/init.hpp"
#include "runtime/shard_run_staged.hpp"
#include "tests/runtime/staged_test_util.hpp"

namespace shardsynth::runtime {
namespace {

const ir::MlpConfig kMlp{2, 4, 8, 16, ir::DType::float32};

ir::StagedSchedule two_stages(const ir::Graph& mlp) { return testing::replicated_stages(mlp, {2, 2}, {"gelu"}); }

void set_spec(ir::Schedule& schedule, const std::string& tensor, const std::string& spec) {
  for (auto& t : schedule.specs) {
    if (t.tensor == tensor) t.spec = spec;
  }
}

TEST_CASE("validate_staged_schedule_AcceptsACutMlp") {
  const ir::Graph mlp = ir::build_mlp(kMlp);
  const ir::StagedSchedule staged = two_stages(mlp);
  REQUIRE(staged.transfers.size() == 1);
  CHECK(staged.transfers[0].tensor == "fc1");
  CHECK_NOTHROW(validate_staged_schedule(mlp, staged));
  // Mismatched specs are fine when the receiver's is reachable: sharded sender, replicated receiver and back.
  ir::StagedSchedule mixed = staged;
  set_spec(mixed.stages[0].schedule, "fc1:send", "SRR");
  mixed.stages[0].schedule.directives.push_back({ir::DirectiveKind::sync, "fc1", "", -1, 1, {}, "fwd_post", "RRR->SRR", -1});
  mixed.transfers[0].spec = "SRR";
  CHECK_NOTHROW(validate_staged_schedule(mlp, mixed));
}

TEST_CASE("validate_staged_schedule_NamesTheOffendingStageAndTensor") {
  const ir::Graph mlp = ir::build_mlp(kMlp);
  const ir::StagedSchedule good = two_stages(mlp);

  ir::StagedSchedule missing = good;
  missing.transfers.clear();
  CHECK_THROWS_WITH_AS(validate_staged_schedule(mlp, missing), doctest::Contains("stage 1 reads 'fc1' but no transfer brings it"),
                       ir::InputError);

  ir::StagedSchedule wrong_spec = good;
  wrong_spec.transfers[0].spec = "SRR";
  CHECK_THROWS_WITH_AS(validate_staged_schedule(mlp, wrong_spec), doctest::Contains("differs from the sender's spec RRR of 'fc1:send'"),
                       ir::InputError);

  ir::StagedSchedule twice = good;
  twice.stages[1].nodes.insert(twice.stages[1].nodes.begin(), "fc1");
  CHECK_THROWS_WITH_AS(validate_staged_schedule(mlp, twice), doctest::Contains("'fc1' is in stage 0 and in stage 1"), ir::InputError);

  ir::StagedSchedule none = good;
  none.stages[1].nodes.pop_back();  // "output"
  CHECK_THROWS_WITH_AS(validate_staged_schedule(mlp, none), doctest::Contains("'output' is in no stage"), ir::InputError);

  ir::StagedSchedule partial = good;
  set_spec(partial.stages[1].schedule, "fc1", "RRR+P");
  CHECK_THROWS_WITH_AS(validate_staged_schedule(mlp, partial), doctest::Contains("is a partial sum"), ir::InputError);

  ir::StagedSchedule duplicate = good;
  duplicate.transfers.push_back(duplicate.transfers[0]);
  CHECK_THROWS_WITH_AS(validate_staged_schedule(mlp, duplicate), doctest::Contains("appears twice"), ir::InputError);

  ir::StagedSchedule bad_stage_plan = good;
  set_spec(bad_stage_plan.stages[1].schedule, "gelu", "RRRRRR");
  CHECK_THROWS_WITH_AS(validate_staged_schedule(mlp, bad_stage_plan), doctest::Contains("stage 1: schedule: tensor 'gelu'"),
                       ir::InputError);

  ir::StagedSchedule unread = good;
  unread.transfers[0].tensor = "x";
  CHECK_THROWS_WITH_AS(validate_staged_schedule(mlp, unread), doctest::Contains("transfer of 'x' from stage 0 to stage 1"),
                       ir::InputError);
}

TEST_CASE("micro_batch_inputs_SeedPlusMicroBatch") {
  const ir::Graph mlp = ir::build_mlp(kMlp);
  const ir::Node& x = mlp.node(*mlp.find("x"));
  const auto first = micro_batch_inputs(mlp, 5, 0);
  const auto third = micro_batch_inputs(mlp, 5, 2);
  REQUIRE(first.size() == 1);
  CHECK(first.at("x") == init_input(x, 5, kMaxExactId));
  CHECK(third.at("x") == init_input(x, 7, kMaxExactId));
  CHECK(third.at("x") != first.at("x"));
}

}  // namespace
}  // namespace shardsynth::runtime
