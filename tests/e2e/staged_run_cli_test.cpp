// End-to-end tests of `shard-run` on staged schedules (written by the
// tests-only stage_cut): the printed per-stage table (golden), --params, and
// the errors: bad --micro-batches, a staged schedule that does not fit,
// options a staged run refuses, and the wrong number of ranks.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"
#include "golden.hpp"
#include "ir/file_io.hpp"
#include "ir/models.hpp"
#include "runtime/safetensors.hpp"

using namespace shardsynth::testing;

namespace {

const std::string kStageCut = SHARDSYNTH_STAGE_CUT_BIN;
const std::string kMpirun = std::string("timeout 120 ") + SHARDSYNTH_MPIEXEC + " --allow-run-as-root --oversubscribe -np ";
const std::string kMlp = "mlp --batch 2 --seq 8 --hidden 16 --ffn 32";

std::string shard_run(int ranks, const std::string& schedule, const std::string& options) {
  return kMpirun + std::to_string(ranks) + " " + SHARDSYNTH_SHARD_RUN_BIN + " --schedule " + schedule + " " + options + " " + kMlp;
}

// A 2x2 staged schedule of the MLP (stage 0: x, fc1; stage 1: gelu, fc2, output) in `dir`.
std::string cut_mlp(const std::filesystem::path& dir, const std::string& options) {
  const std::string path = (dir / "staged.json").string();
  const auto r = run_command(kStageCut + " --mesh 2x2 --stages 2 " + options + " --out " + path + " " + kMlp);
  REQUIRE(r.exit_code == 0);
  return path;
}

}  // namespace

TEST_CASE("shard_run_StagedTableAndChecks") {
  // fc1 leaves stage 0 feature-sharded and stage 1 wants it batch-sharded:
  // stage 0 runs an all-to-all (512 bytes per micro-batch on its first rank)
  // and each rank sends its [1, 8, 32] batch shard (1024 bytes).
  const auto dir = scratch_dir("staged_table");
  const auto r = run_command(shard_run(4, cut_mlp(dir, "--pin 0:fc1:send=RRS --pin 1:fc1=SRR"), "--micro-batches 2 --check"));
  CHECK(r.exit_code == 0);
  // The table is exact; the error figures depend on the BLAS, so only their verdicts are checked.
  const std::size_t table_end = r.out.find("check:");
  REQUIRE(table_end != std::string::npos);
  CHECK(r.out.substr(0, table_end) == golden("staged_mlp_2x2.txt"));
  CHECK(r.out.find("check: micro-batch 0 'output'") != std::string::npos);
  CHECK(r.out.find("check: micro-batch 1 'output'") != std::string::npos);
  CHECK(r.out.find("FAILED") == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("shard_run_StagedParamsFromSafetensors") {
  using shardsynth::runtime::Tensor;
  const auto dir = scratch_dir("staged_params");
  const std::string schedule = cut_mlp(dir, "");
  // fc1 and fc2 with weights and biases of a simple pattern.
  std::map<std::string, Tensor> params;
  auto pattern = [](std::vector<int64_t> shape, float scale) {
    Tensor t = shardsynth::runtime::zeros(std::move(shape));
    for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6);
    return t;
  };
  params["fc1.weight"] = pattern({32, 16}, 0.01f);
  params["fc1.bias"] = pattern({32}, 0.1f);
  params["fc2.weight"] = pattern({16, 32}, 0.02f);
  params["fc2.bias"] = pattern({16}, 0.1f);
  const std::string file = (dir / "params.safetensors").string();
  shardsynth::runtime::write_safetensors(file, params);
  const auto r = run_command(shard_run(4, schedule, "--micro-batches 3 --check --params " + file));
  CHECK(r.exit_code == 0);
  CHECK(count_lines(r.out) >= 3);
  CHECK(r.out.find("check: micro-batch 2 'output'") != std::string::npos);
  CHECK(r.out.find("FAILED") == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("shard_run_StagesPlannedInProcess") {
  // Options after the model, as in `shard-run gpt2 --layers 4 --mesh 4x2 --stages 4 ...`.
  const auto r = run_command(kMpirun + "4 " + SHARDSYNTH_SHARD_RUN_BIN + " " + kMlp +
                             " --mesh 2x2 --stages 2 --stage-balance params --micro-batches 2 --check");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("2 stages of 2 devices, 2 micro-batches") != std::string::npos);
  CHECK(r.out.find("check: micro-batch 1 'output'") != std::string::npos);
  CHECK(r.out.find("FAILED") == std::string::npos);
  CHECK(r.out.find("MISMATCH") == std::string::npos);
}

TEST_CASE("shard_run_StagedErrorsExitCleanly") {
  const auto dir = scratch_dir("staged_errors");
  const std::string schedule = cut_mlp(dir, "--plan replicated");
  // Bad --micro-batches: exit 2 on every rank, one line naming the value.
  auto r = run_command(shard_run(4, schedule, "--micro-batches 0"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--micro-batches 0: must be at least 1") != std::string::npos);
  // Only rank 0 says it (mpirun adds its own lines).
  CHECK(r.err.find("shard-run: error:") == r.err.rfind("shard-run: error:"));
  r = run_command(shard_run(4, std::string(SHARDSYNTH_SCHEDULES_DIR) + "/mlp_all_gather_4.json", "--micro-batches 2"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--micro-batches 2 needs a staged schedule") != std::string::npos);
  // --input is per micro-batch-less: refused with a staged schedule.
  r = run_command(shard_run(4, schedule, "--input x.safetensors"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--input is not supported with a staged schedule") != std::string::npos);
  // A transfer whose spec is not the sender's: refused before any rank communicates.
  nlohmann::json json = nlohmann::json::parse(slurp(schedule));
  json["transfers"][0]["spec"] = "SRR";
  const std::string bad = (dir / "bad.json").string();
  shardsynth::ir::write_file_atomic(bad, json.dump());
  r = run_command(shard_run(4, bad, "--check"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("transfer of 'fc1' from stage 0 to stage 1: its spec SRR differs from the sender's spec RRR") != std::string::npos);
  CHECK(r.out.empty());
  // Planning in-process takes --stages with --mesh, never with --schedule.
  r = run_command(shard_run(4, schedule, "--stages 2 --mesh 2x2"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("give either --schedule FILE or --stages S") != std::string::npos);
  r = run_command(shard_run(4, schedule, "--mesh 2x2"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--mesh, --stage-balance and --cost-model need --stages") != std::string::npos);
  r = run_command(kMpirun + "4 " + SHARDSYNTH_SHARD_RUN_BIN + " " + kMlp + " --stages 4 --mesh 2x2");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--stages 4 needs a mesh whose axis 0 has 4 groups") != std::string::npos);
  // A 2x2 staged schedule on 2 ranks: every rank aborts with the reason.
  r = run_command(shard_run(2, schedule, "--check"));
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("the mesh has 4 devices but MPI runs 2 ranks") != std::string::npos);
  std::filesystem::remove_all(dir);
}
