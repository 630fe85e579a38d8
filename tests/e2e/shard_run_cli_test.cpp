// End-to-end tests of `shard-run` under mpirun: synthesized and hand-written
// schedules run on 2, 4 and 8 CPU ranks and are checked against the
// unsharded model, with bytes equal to the cost model's ring volume.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"

using namespace shardsynth::testing;

namespace {

const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
const std::string kSchedules = SHARDSYNTH_SCHEDULES_DIR;
// Every run is bounded: a hang fails the test instead of stalling CI.
const std::string kMpirun = std::string("timeout 120 ") + SHARDSYNTH_MPIEXEC + " --allow-run-as-root --oversubscribe -np ";

std::string shard_run(int ranks, const std::string& schedule, const std::string& model) {
  return kMpirun + std::to_string(ranks) + " " + SHARDSYNTH_SHARD_RUN_BIN + " --check --schedule " + schedule + " " + model;
}

void expect_checked(const CommandResult& r) {
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("): OK\n") != std::string::npos);
  CHECK(r.out.find("MISMATCH") == std::string::npos);
}

const char* kMlp = "mlp --batch 8 --seq 16 --hidden 32 --ffn 64";
const char* kGpt2 = "gpt2 --layers 2 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256";

}  // namespace

TEST_CASE("shard_run_SynthesizedSchedulesMatchTheUnshardedModel") {
  const auto dir = scratch_dir("shard_run");
  const std::pair<int, const char*> meshes[] = {{2, "2"}, {4, "4"}, {4, "2x2"}, {8, "8"}, {8, "2x4"}};
  for (const auto& [ranks, mesh] : meshes) {
    for (const char* model : {kMlp, kGpt2}) {
      for (const char* options : {"", " --mode training --plan megatron", " --peak-tflops 0.001 --mode training"}) {
        CAPTURE(mesh);
        CAPTURE(model);
        CAPTURE(options);
        const std::string plan = (dir / "plan.json").string();
        const auto synth = run_command(kSynth + " --quiet --mesh " + mesh + options + " --schedule " + plan + " " + model);
        REQUIRE(synth.exit_code == 0);
        const auto run = run_command(shard_run(ranks, plan, model));
        expect_checked(run);
      }
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("shard_run_SlapoPlanOfTheSeedMlp") {
  const auto dir = scratch_dir("shard_run_slapo");
  const std::string plan = (dir / "plan.json").string();
  const std::string mlp = "mlp --seq 64";
  REQUIRE(run_command(kSynth + " --quiet --cost-model slapo --mesh 8 --schedule " + plan + " " + mlp).exit_code == 0);
  const auto run = run_command(shard_run(8, plan, mlp));
  expect_checked(run);
  CHECK(run.out.find("all_gather                    1835008              1835008\n") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("shard_run_HandWrittenSchedulesCoverEveryCollective") {
  const std::string mlp = "mlp --batch 2 --seq 8 --hidden 16 --ffn 32";
  const std::pair<const char*, const char*> cases[] = {
      {"mlp_all_gather_4.json", "all_gather                        768                  768"},
      {"mlp_megatron_reduce_scatter_4.json", "reduce_scatter                    768                  768"},
      {"mlp_slice_all_to_all_all_reduce_4.json", "all_reduce                       1536                 1536"},
      {"mlp_slice_all_to_all_all_reduce_4.json", "all_to_all                        384                  384"},
      {"mlp_2d_reduce_scatter_2x2.json", "reduce_scatter                    256                  256"},
  };
  for (const auto& [file, line] : cases) {
    CAPTURE(file);
    const auto run = run_command(shard_run(4, kSchedules + "/" + file, mlp));
    expect_checked(run);
    CHECK(run.out.find(line) != std::string::npos);
  }
}

TEST_CASE("shard_run_FailuresEndEveryRankWithOneMessage") {
  const std::string mlp = "mlp --batch 2 --seq 8 --hidden 16 --ffn 32";
  // Bad input found before any communication: every rank exits 2, rank 0 says why.
  auto r = run_command(kMpirun + "2 " + SHARDSYNTH_SHARD_RUN_BIN + " --schedule /nonexistent/plan.json " + mlp);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("cannot read '/nonexistent/plan.json'") != std::string::npos);
  // A schedule for 4 devices on 2 ranks: every rank aborts.
  r = run_command(shard_run(2, kSchedules + "/mlp_all_gather_4.json", mlp));
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("the mesh has 4 devices but MPI runs 2 ranks") != std::string::npos);
  // A shape that does not divide: seq 6 over 4 ranks.
  r = run_command(shard_run(4, kSchedules + "/mlp_all_gather_4.json", "mlp --batch 2 --seq 6 --hidden 16 --ffn 32"));
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("does not divide") != std::string::npos);
}
