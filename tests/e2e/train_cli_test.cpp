// End-to-end tests of `shard-run --train` under mpirun: training plans from
// `synth --mode training` (synthesized and Megatron's) train 3 Adam steps on
// 2, 4 and 8 CPU ranks, 1-D and 2-D, and match the unsharded reference in
// the loss per step, the gradients of step 1 and the trained parameters,
// with bytes equal to the training cost model's volumes; so do the ZeRO-1,
// FSDP and Megatron+FSDP plans, and plans that recompute activations. Bad training flags
// stop every rank with one line and exit 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "e2e/run_command.hpp"
#include "e2e/run_grid.hpp"

using namespace shardsynth::testing;

namespace {

const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
const std::string kMpirun = std::string("timeout 180 ") + SHARDSYNTH_MPIEXEC + " --allow-run-as-root --oversubscribe -np ";
const char* kMlp = "mlp --batch 8 --seq 16 --hidden 32 --ffn 64";
const char* kGpt2 = "gpt2 --layers 2 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256";

std::string train(int ranks, const std::string& plan, const std::string& flags, const std::string& model) {
  return kMpirun + std::to_string(ranks) + " " + SHARDSYNTH_SHARD_RUN_BIN + " --train --schedule " + plan + " " + flags +
         " " + model;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("train_TrainingPlansMatchTheUnshardedReference") {
  const auto dir = scratch_dir("train_plans");
  const std::string plan = (dir / "plan.json").string();
  // A low peak makes compute dear: the synthesized optimum shards (the default prices these tiny
  // models replicated).
  for_each_run_case({{2, "2"}, {4, "4"}, {4, "2x2"}, {8, "8"}, {8, "2x4"}}, {kMlp, kGpt2},
                    {" --peak-tflops 0.001", " --plan megatron"}, [&](const RunCase& c) {
                      const auto synth = run_command(kSynth + " --quiet --mode training --mesh " + c.mesh + c.options +
                                                     " --schedule " + plan + " " + c.model);
                      REQUIRE(synth.exit_code == 0);
                      const auto run = run_command(train(c.ranks, plan, "--steps 3 --check", c.model));
                      CHECK(run.exit_code == 0);
                      CHECK(count(run.out, ": OK\n") == 3);
                      CHECK(run.out.find("MISMATCH") == std::string::npos);
                      CHECK(run.out.find("\n3 ") != std::string::npos);  // a loss row per step
                      // The plan communicates.
                      CHECK(run.out.find("\ntotal                               0 ") == std::string::npos);
                    });
  std::filesystem::remove_all(dir);
}

namespace {

// The bytes rank 0 sent in one collective, from shard-run's table.
long long sent(const std::string& out, const std::string& collective) {
  const auto at = out.find("\n" + collective + " ");
  return at == std::string::npos ? -1 : std::stoll(out.substr(out.find_first_not_of(' ', at + collective.size() + 1)));
}

}  // namespace

TEST_CASE("train_ZeroPlansMatchTheUnshardedReference") {
  // ZeRO-1, FSDP and Megatron+FSDP store parameters, gradients and Adam
  // state apart from their uses (the schedule's ":stored"/":grad"/":state"
  // specs). Slow compute (--peak-tflops) makes data parallelism pay on this
  // small GPT-2, so gradients are reduced and parameters gathered for real.
  const auto dir = scratch_dir("train_zero");
  const std::string plan = (dir / "plan.json").string();
  struct Case {
    int ranks;         // MPI ranks
    const char* mesh;  // synth's --mesh
    const char* plan;  // synth's --plan
  };
  const Case cases[] = {{2, "2", "zero1"}, {2, "2", "fsdp"},          {4, "4", "zero1"},
                        {4, "4", "fsdp"},  {8, "8", "fsdp"},          {8, "2x4", "megatron-fsdp"},
                        {4, "2x2", "megatron-fsdp"}};
  for (const auto& c : cases) {
    CAPTURE(c.mesh);
    CAPTURE(c.plan);
    const auto synth = run_command(kSynth + " --quiet --mode training --peak-tflops 0.001 --mesh " + c.mesh + " --plan " +
                                   c.plan + " --schedule " + plan + " " + kGpt2);
    REQUIRE(synth.exit_code == 0);
    const std::string written = slurp(plan);
    CHECK(count(written, ":stored\"") + count(written, ":state\"") > 0);  // storage apart from the uses
    const auto run = run_command(train(c.ranks, plan, "--steps 3 --check", kGpt2));
    CHECK(run.exit_code == 0);
    CHECK(count(run.out, ": OK\n") == 3);
    CHECK(run.out.find("MISMATCH") == std::string::npos);
    CHECK(sent(run.out, "all_gather") > 0);  // the updated shards gathered back
    if (std::string(c.plan) != "zero1") CHECK(sent(run.out, "reduce_scatter") > 0);  // gradients reduce-scattered
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("train_RecomputedPlansMatchTheUnshardedReference") {
  // A budget below what saving every activation needs makes the plan
  // recompute (its sch[...].checkpoint() directives): shard-run drops those
  // outputs after the forward, runs their forwards again before their
  // segment's backward, and still matches the unsharded reference, with the
  // bytes of the second forwards in both columns.
  const auto dir = scratch_dir("train_recompute");
  const std::string plan = (dir / "plan.json").string();
  struct Case {
    int ranks;            // MPI ranks
    const char* mesh;     // synth's --mesh
    const char* options;  // synth's plan flags and budget (bytes per device)
  };
  const Case cases[] = {{8, "8", "--plan megatron --memory 900000"},
                        {8, "2x4", "--memory 1500000"},
                        {4, "2x2", "--memory 1500000"},
                        {2, "2", "--plan data-parallel --memory 4000000"}};
  for (const auto& c : cases) {
    CAPTURE(c.mesh);
    CAPTURE(c.options);
    const auto synth = run_command(kSynth + " --quiet --mode training --time-limit " +
                                   std::to_string(search_seconds(5)) + " --mesh " + c.mesh + " " + c.options +
                                   " --schedule " + plan + " " + kGpt2);
    REQUIRE(synth.exit_code == 0);
    const int checkpoints = count(slurp(plan), "\"checkpoint\"");
    CHECK(checkpoints > 0);
    const auto run = run_command(train(c.ranks, plan, "--steps 2 --check", kGpt2));
    CHECK(run.exit_code == 0);
    CHECK(count(run.out, ": OK\n") == 3);
    CHECK(run.out.find("MISMATCH") == std::string::npos);
    // Every checkpointed op runs its forward again in each of the 2 steps.
    CHECK(run.out.find("recomputation: " + std::to_string(2 * checkpoints) + " op forwards") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("train_SgdAndTheLossFall") {
  const auto dir = scratch_dir("train_sgd");
  const std::string plan = (dir / "plan.json").string();
  REQUIRE(run_command(kSynth + " --quiet --mode training --mesh 4 --schedule " + plan + " " + kGpt2).exit_code == 0);
  const auto run = run_command(train(4, plan, "--steps 4 --optimizer sgd --lr 0.5 --check", kGpt2));
  CHECK(run.exit_code == 0);
  CHECK(count(run.out, ": OK\n") == 3);
  CHECK(run.out.find("training 4 steps (sgd, lr 0.5), loss in_graph") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("train_BadFlagsExitTwoBeforeAnyRankCommunicates") {
  const auto dir = scratch_dir("train_bad");
  const std::string training = (dir / "training.json").string();
  const std::string inference = (dir / "inference.json").string();
  REQUIRE(run_command(kSynth + " --quiet --mode training --mesh 2 --schedule " + training + " " + kMlp).exit_code == 0);
  REQUIRE(run_command(kSynth + " --quiet --mesh 2 --schedule " + inference + " " + kMlp).exit_code == 0);
  const std::pair<std::string, std::string> cases[] = {
      {train(2, inference, "", kMlp), "is an inference plan"},
      {train(2, training, "--lr 0", kMlp), "--lr 0: must be a positive finite number"},
      {train(2, training, "--lr -1", kMlp), "--lr -1: must be a positive finite number"},
      {train(2, training, "--lr nan", kMlp), "must be a positive finite number"},
      {train(2, training, "--lr inf", kMlp), "must be a positive finite number"},
      {train(2, training, "--steps 0", kMlp), "--steps 0: must be at least 1"},
      {train(2, training, "--optimizer lion", kMlp), "unknown optimizer 'lion'"},
      {kMpirun + "2 " + SHARDSYNTH_SHARD_RUN_BIN + " --steps 3 --schedule " + training + " " + kMlp, "need --train"},
  };
  for (const auto& entry : cases) {
    // clang 14 cannot capture a structured binding in doctest's CAPTURE lambda: named copies.
    const std::string command = entry.first;
    const std::string message = entry.second;
    CAPTURE(command);
    const auto run = run_command(command);
    CHECK(run.exit_code == 2);
    CHECK(run.err.find(message) != std::string::npos);
    CHECK(count(run.err, "shard-run: error:") == 1);
  }
  std::filesystem::remove_all(dir);
}

namespace {

// The losses of a `{"losses": [...]}` line, or of shard-run's step rows.
std::vector<double> oracle_losses(const std::string& out) {
  std::vector<double> losses;
  const auto at = out.find("{\"losses\": [");
  if (at == std::string::npos) return losses;
  std::size_t pos = at + 12;
  while (pos < out.size() && out[pos] != ']') {
    std::size_t used = 0;
    losses.push_back(std::stod(out.substr(pos), &used));
    pos += used;
    while (pos < out.size() && (out[pos] == ',' || out[pos] == ' ')) ++pos;
  }
  return losses;
}

std::vector<double> shard_run_losses(const std::string& out, int steps) {
  std::vector<double> losses;
  for (int s = 1; s <= steps; ++s) {
    const auto at = out.find("\n" + std::to_string(s) + " ");
    if (at == std::string::npos) return losses;
    losses.push_back(std::stod(out.substr(at + 3)));
  }
  return losses;
}

}  // namespace

TEST_CASE("train_PlainPyTorchAdamAgreesWithShardRunOnGpt2At8Ranks") {
  const std::string python = SHARDSYNTH_PYTHON_EXE;
  if (run_command(python + " -c 'import torch'").exit_code != 0) {
    MESSAGE("skipped: " << python << " has no torch (scripts/bootstrap installs it)");
    return;
  }
  const auto dir = scratch_dir("train_oracle");
  const std::string sizes = "--layers 2 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256";
  const std::string oracle = python + " " + SHARDSYNTH_SOURCE_DIR + "/tests/python/gpt2_train_oracle.py ";
  REQUIRE(run_command(oracle + "init " + dir.string() + " " + sizes + " --seed 7").exit_code == 0);
  const std::string model = "gpt2 " + sizes;
  const std::string plan = (dir / "plan.json").string();
  const std::string trained = (dir / "trained.safetensors").string();
  for (const char* options : {" --plan megatron", " --peak-tflops 0.001"}) {
    CAPTURE(options);
    const auto synth =
        run_command(kSynth + " --quiet --mode training --mesh 2x4" + options + " --schedule " + plan + " " + model);
    REQUIRE(synth.exit_code == 0);
    const auto run = run_command(train(8, plan,
                                       "--steps 3 --lr 0.001 --params " + (dir / "params.safetensors").string() +
                                           " --input " + (dir / "input.safetensors").string() + " --output " + trained,
                                       model));
    REQUIRE(run.exit_code == 0);
    const auto torch_run = run_command(oracle + "train " + dir.string() + " " + sizes + " --steps 3 --lr 0.001 --trained " + trained);
    CAPTURE(torch_run.out);
    CHECK(torch_run.exit_code == 0);
    const auto want = oracle_losses(torch_run.out);
    const auto got = shard_run_losses(run.out, 3);
    REQUIRE(want.size() == 3);
    REQUIRE(got.size() == 3);
    for (int s = 0; s < 3; ++s) CHECK(got[s] == doctest::Approx(want[s]).epsilon(1e-5));
    CHECK(got[2] < got[0]);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("train_StagedGpt2FourStagesOfTwoTrainsFourMicroBatches") {
  const auto dir = scratch_dir("train_staged");
  const std::string plan = (dir / "staged.json").string();
  const std::string gpt2 = "gpt2 --layers 4 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256";
  // A low peak makes compute dear, so the stage plans shard inside each group too.
  REQUIRE(run_command(kSynth + " --quiet --stages 4 --mesh 4x2 --micro-batches 4 --mode training --peak-tflops 0.001" +
                      " --schedule " + plan + " " + gpt2)
              .exit_code == 0);
  const auto run = run_command(train(8, plan, "--steps 2 --micro-batches 4 --check", gpt2));
  CHECK(run.exit_code == 0);
  CHECK(count(run.out, ": OK\n") == 3);
  CHECK(run.out.find("MISMATCH") == std::string::npos);
  CHECK(run.out.find("4 stages of 2 devices, 4 micro-batches, training 2 steps") != std::string::npos);
  // wte (stage 0) and lm_head (stage 3) are tied: both groups exchange the gradient.
  CHECK(run.out.find("\n0 ") != std::string::npos);

  // An inference staged plan is refused before any rank communicates.
  const std::string inference = (dir / "inference.json").string();
  REQUIRE(run_command(kSynth + " --quiet --stages 4 --mesh 4x2 --schedule " + inference + " " + gpt2).exit_code == 0);
  const auto refused = run_command(train(8, inference, "--micro-batches 4", gpt2));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("is an inference plan") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("train_LlamaWithFewerKvHeadsThanTheDegreeTrains") {
  const auto dir = scratch_dir("train_llama");
  const std::string plan = (dir / "plan.json").string();
  const std::string llama = "llama --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 128 --vocab 256 --seq 16 --batch 4";
  const std::pair<const char*, const char*> cases[] = {{"8", " --plan megatron"}, {"2x4", " --peak-tflops 0.001"}};
  for (const auto& [mesh, options] : cases) {
    const auto mesh_text = mesh;
    CAPTURE(mesh_text);
    REQUIRE(run_command(kSynth + " --quiet --mode training --mesh " + mesh + options + " --schedule " + plan + " " + llama)
                .exit_code == 0);
    const auto run = run_command(train(8, plan, "--steps 3 --check", llama));
    CHECK(run.exit_code == 0);
    CHECK(count(run.out, ": OK\n") == 3);
    CHECK(run.out.find("MISMATCH") == std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
