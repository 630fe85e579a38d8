// End-to-end: the cross-entropy head inside the plan, the default of every
// training graph (no flag). A small GPT-2 and a small Llama end in a
// `cross_entropy` op against a `labels` input; `synth` plans it like any op, and where the plan shards the logits'
// vocabulary (Megatron's column-parallel lm_head read in place: Megatron-LM's
// vocabulary-parallel cross-entropy) `shard-run --train --check` runs the
// rows' statistics exchange and the partial loss on 8 CPU ranks and matches
// the unsharded reference in the loss per step, with the bytes of every
// collective kind equal to the cost model's.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"

using namespace shardsynth::testing;

namespace {

const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
const std::string kMpirun = std::string("timeout 180 ") + SHARDSYNTH_MPIEXEC + " --allow-run-as-root --oversubscribe -np ";
const char* kGpt2 = "gpt2 --layers 1 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256";
const char* kLlama = "llama --preset llama-3.2-1b --untied --layers 1 --hidden 64 --heads 4 --kv-heads 2 --ffn 128 "
                     "--vocab 256 --seq 16 --batch 8";

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The spec the loss op reads its logits in: the target of its fwd_pre sync on
// operand 0 in the directives `out`, else lm_head's spec in the schedule.
std::string loss_logits_spec(const std::string& out, const std::string& schedule_path) {
  const std::string pre = "sch[\"loss\"].sync(mode=\"fwd_pre\", sync_op_or_fn=\"";
  for (auto at = out.find(pre); at != std::string::npos; at = out.find(pre, at + 1)) {
    const auto end = out.find('"', at + pre.size());
    if (out.compare(end, 9, "\", arg=0)") != 0) continue;
    const std::string sync = out.substr(at + pre.size(), end - at - pre.size());
    return sync.substr(sync.find("->") + 2);
  }
  std::ifstream in(schedule_path);
  const auto schedule = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  for (const auto& s : schedule["specs"]) {
    if (s["tensor"] == "lm_head") return s["spec"].get<std::string>();
  }
  return "";
}

}  // namespace

TEST_CASE("loss_head_VocabularyParallelTrainingMatchesTheReference") {
  const auto dir = scratch_dir("loss_head");
  const std::string plan = (dir / "plan.json").string();
  struct Case {
    const char* mesh;   // --mesh (and links), on 8 ranks
    const char* plan;   // synth flags choosing the plan
    const char* model;  // the model subcommand
  };
  // At these sizes a ring step's latency outweighs every byte, and gathering
  // the logits (one all-gather) beats exchanging the rows' statistics and
  // resolving the partial loss (three collectives); near-free latency lets
  // the bytes decide, as they do at real sizes. Megatron's untied lm_head is
  // column-parallel, so the logits arrive sharded on the vocabulary; GPT-2's
  // optimum under dear compute shards the tied lm_head's vocabulary on axis 0
  // and the sequence on axis 1.
  const Case cases[] = {
      {"2x4 --latency 0.01,0.01", "--peak-tflops 0.001", kGpt2},
      {"8 --latency 0.01", "--plan megatron", kLlama},
      {"2x4 --latency 0.01,0.01", "--plan megatron", kLlama},
  };
  for (const Case& c : cases) {
    CAPTURE(c.mesh);
    CAPTURE(c.plan);
    CAPTURE(c.model);
    const auto synth = run_command(kSynth + " --quiet --mode training --mesh " + c.mesh + " " + c.plan +
                                   " --schedule " + plan + " " + c.model);
    REQUIRE(synth.exit_code == 0);
    CHECK(synth.out.find("sch[\"loss\"]") != std::string::npos);
    // The logits stay sharded on the vocabulary (their last dim) into the loss.
    const std::string logits = loss_logits_spec(synth.out, plan);
    CAPTURE(logits);
    CHECK(!logits.empty());
    CHECK(logits.back() != 'R');
    const auto run = run_command(kMpirun + "8 " + SHARDSYNTH_SHARD_RUN_BIN + " --train --steps 3 --check --schedule " +
                                 plan + " " + c.model);
    CAPTURE(run.out);
    CAPTURE(run.err);
    CHECK(run.exit_code == 0);
    CHECK(count(run.out, ": OK\n") == 3);
    CHECK(run.out.find("MISMATCH") == std::string::npos);
    CHECK(run.out.find("in_graph") != std::string::npos);
    // The loss is read where the plan leaves it: nothing is gathered outside the plan.
    CHECK(run.out.find("(forward with the loss head, backward and gradient syncs of all 3 steps)") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("loss_head_TrainingGraphsEndInTheLossInferenceGraphsInTheLogits") {
  // The graph table synth prints: its last rows are the labels input, the
  // loss and the scalar output in training, the logits' output otherwise
  // (or with --loss-head, an evaluation loss). The MLP has no loss head.
  const std::string loss_row = "<function cross_entropy>";
  for (const char* model : {kGpt2, kLlama}) {
    CAPTURE(model);
    const auto training = run_command(kSynth + " --mode training --mesh 2 " + model);
    REQUIRE(training.exit_code == 0);
    CHECK(training.out.find(loss_row) != std::string::npos);
    CHECK(training.out.find("\nlabels ") != std::string::npos);
    const auto inference = run_command(kSynth + " --mesh 2 " + model);
    REQUIRE(inference.exit_code == 0);
    CHECK(inference.out.find(loss_row) == std::string::npos);
    const auto evaluation = run_command(kSynth + " --loss-head --mesh 2 " + model);
    REQUIRE(evaluation.exit_code == 0);
    CHECK(evaluation.out.find(loss_row) != std::string::npos);
  }
  const auto mlp = run_command(kSynth + " --mode training --mesh 2 mlp --batch 8 --seq 16 --hidden 32 --ffn 64");
  REQUIRE(mlp.exit_code == 0);
  CHECK(mlp.out.find(loss_row) == std::string::npos);
}
