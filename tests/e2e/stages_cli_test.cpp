// End-to-end tests of `synth --stages`.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"
#include "ir/staged_schedule.hpp"

using namespace shardsynth::testing;

namespace {
const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
const std::string kTiny = " gpt2 --layers 2 --heads 2 --embd 32 --seq 8 --batch 2 --vocab 256";
}  // namespace

TEST_CASE("synth_StagesPrintsTablesAndWritesStagedSchedule") {
  const auto dir = scratch_dir("stages_cli");
  const auto path = dir / "staged.json";
  const auto r = run_command(kSynth + " -q --mesh 2x2 --stages 2 --micro-batches 4 --schedule " + path.string() + kTiny);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.rfind("Pipeline stages (mesh 2x2, 2 stages, balance cost), per micro-batch:\n", 0) == 0);
  CHECK(r.out.find("Tensors sent between stages, per micro-batch:\n") != std::string::npos);
  CHECK(r.out.find("Pipeline time for 4 micro-batches: ") != std::string::npos);
  CHECK(r.out.find("\nStage 1 directives") != std::string::npos);
  const auto json = nlohmann::json::parse(slurp(path));
  CHECK(json.at("format") == "shardsynth.staged_schedule/1");
  const auto staged = shardsynth::ir::staged_schedule_from_json(json);
  CHECK(staged.stages.size() == 2);
  CHECK(staged.micro_batches == 4);
  CHECK(staged.mesh == std::vector<int64_t>{2, 2});
  CHECK(!staged.transfers.empty());
  CHECK(r.out.find(staged.transfers.front().tensor + " ") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_StagesParamsOnGpt2SmallExitsTwo") {
  const auto dir = scratch_dir("stages_params");
  const auto path = dir / "staged.json";
  const auto r = run_command(kSynth + " -q --mesh 4x2 --stages 4 --stage-balance params --schedule " + path.string() + " gpt2");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("3 non-empty stages") != std::string::npos);
  CHECK(r.err.find("use --stage-balance cost") != std::string::npos);
  CHECK(!std::filesystem::exists(path));
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_StagesBadInputExitsTwo") {
  const auto wrong_mesh = run_command(kSynth + " -q --mesh 8 --stages 4" + kTiny);
  CHECK(wrong_mesh.exit_code == 2);
  CHECK(wrong_mesh.err.find("got mesh 8") != std::string::npos);
  const auto balance = run_command(kSynth + " -q --mesh 2x2 --stages 2 --stage-balance even" + kTiny);
  CHECK(balance.exit_code == 2);
  CHECK(balance.err.find("unknown stage balance 'even'") != std::string::npos);
  const auto plan = run_command(kSynth + " -q --mesh 2x2 --stages 2 --plan megatron" + kTiny);
  CHECK(plan.exit_code == 2);
  CHECK(plan.err.find("--plan cannot be combined with --stages") != std::string::npos);
}
