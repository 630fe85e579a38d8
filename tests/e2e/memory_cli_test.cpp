// End-to-end: the runtime confirms the memory model. `synth --memory-report`
// writes each plan's predicted figures and planned tensors into the
// schedule; `shard-run --check` (and `--train --steps 1 --check`) holds and
// frees those tensors as planned on every rank and must measure the same
// peak and the same bytes per category. Plans: data-parallel, fsdp
// (training), megatron and the synthesized optimum, on meshes 2, 4, 8 and
// 2x4, in inference and training (a subset of that matrix, so that the test
// stays near a minute on two cores), and a plan that recomputes activations
// under a memory budget; under the sanitizers half of those cases, with
// every mesh, every plan in each mode and the budget still among them
// (testing::sampled). A schedule whose prediction is off by a
// byte fails --check with one line naming the rank and the category (the
// planned transient category too); one that frees a tensor before its reader
// stops the run, naming both, and so does a parameter's gathered copy
// planned around its op's forward alone, which the backward gathers again.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"
#include "ir/schedule.hpp"
#include "sanitized.hpp"
#include "tiny_gpt2.hpp"

using namespace shardsynth::testing;

namespace {

const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
const std::string kMpirun = std::string("timeout 180 ") + SHARDSYNTH_MPIEXEC + " --allow-run-as-root --oversubscribe -np ";
const char* kGpt2 = "gpt2 --layers 2 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256";

struct Case {
  int ranks;         // MPI ranks
  const char* mesh;  // --mesh
  const char* plan;  // --plan NAME, or "" for the synthesized optimum (--peak-tflops 0.001 makes it shard)
  bool training;     // --mode training and shard-run --train --steps 1
  const char* extra = "";  // more synth flags (a --memory budget that makes the plan recompute)
};

std::string synth_command(const Case& c, const std::string& schedule) {
  const std::string plan = *c.plan ? std::string(" --plan ") + c.plan : std::string(" --peak-tflops 0.001");
  return kSynth + " --quiet --memory-report --mesh " + c.mesh + plan + (c.training ? " --mode training" : "") + " " +
         c.extra + " --schedule " + schedule + " " + kGpt2;
}

std::string run_command_line(const Case& c, const std::string& schedule) {
  return kMpirun + std::to_string(c.ranks) + " " + SHARDSYNTH_SHARD_RUN_BIN + (c.training ? " --train --steps 1" : "") +
         " --check --schedule " + schedule + " " + kGpt2;
}

}  // namespace

TEST_CASE("shard_run_MeasuredMemoryMatchesThePrediction") {
  const auto dir = scratch_dir("memory_cli");
  const std::string schedule = (dir / "plan.json").string();
  // The sanitized suite runs the cases at even indices, the left column
  // (sampled()), some 40% of the time under ASan: every mesh, each of the
  // seven (plan, mode) pairs and the budget are among them, most on the
  // meshes of fewer ranks, which run fastest. Keep that when adding cases.
  const Case cases[] = {
      {8, "2x4", "data-parallel", false}, {2, "2", "data-parallel", false},
      {8, "8", "fsdp", true},             {8, "2x4", "", true},
      {2, "2", "megatron", false},        {4, "4", "megatron", true},
      {4, "4", "", false},                {8, "8", "megatron", false},
      {4, "4", "data-parallel", true},    {8, "2x4", "megatron", true},
      {2, "2", "megatron", true},         {8, "2x4", "fsdp", true},
      {2, "2", "", true},                 {4, "4", "fsdp", true},
      {2, "2", "fsdp", true},             {8, "8", "", false},
      // Under a budget the plan recomputes activations: each is held twice, freed between.
      {2, "2", "", true, "--memory 3000000 --time-limit 10"}, {8, "8", "data-parallel", true},
  };
  for (int i = 0; i < static_cast<int>(std::size(cases)); ++i) {
    if (!sampled({i})) continue;
    const Case& c = cases[i];
    const std::string mesh = c.mesh, plan = *c.plan ? c.plan : "synthesized";
    const bool training = c.training;
    CAPTURE(mesh);
    CAPTURE(plan);
    CAPTURE(training);
    REQUIRE(run_command(synth_command(c, schedule)).exit_code == 0);
    const auto run = run_command(run_command_line(c, schedule));
    CAPTURE(run.out);
    CAPTURE(run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.out.find("\npredicted ") != std::string::npos);
    CHECK(run.out.find("\nrank " + std::to_string(c.ranks - 1) + " measured ") != std::string::npos);
    CHECK(run.out.find("check: memory of every rank at its peak, by category, as predicted: OK") != std::string::npos);
    CHECK(run.out.find("not compared, the model counts none") != std::string::npos);
    if (*c.extra) CHECK(run.out.find("recomputation: ") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("shard_run_MemoryMismatchFailsCheckWithOneLine") {
  const auto dir = scratch_dir("memory_cli_bad");
  const std::string schedule = (dir / "plan.json").string();
  const Case c{2, "2", "megatron", true};
  REQUIRE(run_command(synth_command(c, schedule)).exit_code == 0);
  nlohmann::json json = nlohmann::json::parse(slurp(schedule));
  const long long predicted = json["memory"]["grads"].get<long long>() + 1;
  json["memory"]["grads"] = predicted;
  std::ofstream(schedule) << json.dump();
  const auto run = run_command(run_command_line(c, schedule));
  CHECK(run.exit_code == 1);
  CHECK(run.out.find("check: memory: rank 0: grads measured " + std::to_string(predicted - 1) +
                     " bytes at its peak, predicted " + std::to_string(predicted) + " bytes: FAILED") != std::string::npos);
  // A plan that frees the token ids before the embedding reads them: the runtime stops there.
  json = nlohmann::json::parse(slurp(schedule));
  for (auto& t : json["memory"]["tensors"]) {
    if (t["name"] == "input_ids") t["live"] = nlohmann::json::parse("[[0, 1]]");
  }
  std::ofstream(schedule) << json.dump();
  const auto early = run_command(run_command_line(c, schedule));
  CHECK(early.exit_code != 0);
  CHECK(early.err.find("memory plan: tensor 'input_ids' is read at time step 2 (forward of wte), outside its planned "
                       "interval") != std::string::npos);
  // A planned tensor the graph lacks stops every rank before the run, with one line.
  json["memory"]["tensors"][0]["name"] = "nonesuch";
  std::ofstream(schedule) << json.dump();
  const auto unknown = run_command(run_command_line(c, schedule));
  CHECK(unknown.exit_code == 2);
  const std::string first_line = unknown.err.substr(0, unknown.err.find('\n'));  // mpirun adds its own lines after it
  CHECK(first_line.find("shard-run: error: ") == 0);
  CHECK(first_line.find("memory tensor 'nonesuch', which the graph lacks") != std::string::npos);
  // A training plan's figures price a training step: a forward run says so and measures nothing.
  REQUIRE(run_command(synth_command(c, schedule)).exit_code == 0);
  const auto forward = run_command(kMpirun + "2 " + SHARDSYNTH_SHARD_RUN_BIN + " --check --schedule " + schedule + " " + kGpt2);
  CHECK(forward.exit_code == 0);
  CHECK(forward.out.find("memory: the schedule's figures are for a training step") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("shard_run_GatheredParameterCopiesAreHeldAsPlanned") {
  const auto dir = scratch_dir("memory_cli_gathered");
  const std::string schedule = (dir / "plan.json").string();
  const Case c{2, "2", "fsdp", true};
  REQUIRE(run_command(synth_command(c, schedule)).exit_code == 0);
  const nlohmann::json planned = nlohmann::json::parse(slurp(schedule));
  // The planned transient bytes at the peak are compared like any category.
  nlohmann::json json = planned;
  const long long transient = json["memory"]["transient"].get<long long>();
  json["memory"]["transient"] = transient + 1;
  std::ofstream(schedule) << json.dump();
  const auto off = run_command(run_command_line(c, schedule));
  CHECK(off.exit_code == 1);
  CHECK(off.out.find("check: memory: rank 0: transient measured " + std::to_string(transient) +
                     " bytes at its peak, predicted " + std::to_string(transient + 1) + " bytes: FAILED") !=
        std::string::npos);
  // FSDP stores h.0.mlp.c_fc's weight sharded and reads it whole: a copy
  // planned over its forward step alone is held again at its backward.
  const shardsynth::ir::Graph graph = tiny_gpt2(2, true);  // the training graph, which ends in its loss
  const auto order = graph.topological_order();
  int64_t forward = 0;
  while (graph.node(order[static_cast<std::size_t>(forward)]).name != "h.0.mlp.c_fc") ++forward;
  json = planned;
  const std::string name = std::string("h.0.mlp.c_fc.weight") + shardsynth::ir::kGatheredSuffix;
  auto& tensors = json["memory"]["tensors"];
  for (auto it = tensors.begin(); it != tensors.end();) it = (*it)["name"] == name ? tensors.erase(it) : it + 1;
  tensors.push_back({{"name", name}, {"category", "transient"}, {"bytes", 64 * 256 * 4},
                     {"live", nlohmann::json::array({nlohmann::json::array({forward, forward + 1})})}});
  std::ofstream(schedule) << json.dump();
  const auto early = run_command(run_command_line(c, schedule));
  CHECK(early.exit_code != 0);
  CHECK(early.err.find("memory plan: tensor '" + name + "' is held at time step " +
                       std::to_string(2 * static_cast<int64_t>(graph.size()) - 1 - forward) +
                       " (backward of h.0.mlp.c_fc), outside its planned interval") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// bf16 training (issue 30): the runtime holds 2 bytes per parameter and per
// gradient element and, per element of its optimizer shard, fp32 Adam
// moments and an fp32 master copy (12 bytes). ZeRO-1 on 8 devices: the
// ZeRO paper's 2Ψ + 2Ψ + 12Ψ/8, predicted and measured alike.
TEST_CASE("shard_run_Bf16TrainingHoldsTheZeroMixedPrecisionBytes") {
  const auto dir = scratch_dir("memory_cli_bf16");
  const std::string schedule = (dir / "plan.json").string();
  const std::string model = std::string("--dtype bf16 ") + kGpt2;
  REQUIRE(run_command(kSynth + " --quiet --memory-report --mesh 2x4 --plan zero1 --mode training --schedule " + schedule +
                      " " + model)
              .exit_code == 0);
  const auto run = run_command(kMpirun + "8 " + SHARDSYNTH_SHARD_RUN_BIN + " --train --steps 1 --check --schedule " +
                               schedule + " " + model);
  CAPTURE(run.out);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("check: memory of every rank at its peak, by category, as predicted: OK") != std::string::npos);
  const auto at = run.out.find("\nrank 7 measured ");
  REQUIRE(at != std::string::npos);
  std::istringstream row(run.out.substr(at + 17));
  long long params = 0, grads = 0, optimizer = 0;
  row >> params >> grads >> optimizer;
  CHECK(params > 0);
  CHECK(grads == params);               // 2Ψ and 2Ψ
  CHECK(8 * optimizer == 6 * params);   // 12Ψ/8 against 2Ψ
  std::filesystem::remove_all(dir);
}
