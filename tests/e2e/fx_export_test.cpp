// End-to-end tests of the torch.fx path: examples/export_fx.py (run with
// the project's .venv/ Python, SHARDSYNTH_PYTHON_EXE) writes graph JSON from the
// torch MLP, GPT-2 and Llama, and the real `synth` binary solves it to the same
// optimum as the built-in builder for the same sizes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "e2e/run_command.hpp"
#include "ir/schedule.hpp"

using namespace shardsynth::testing;

namespace {

const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
const std::string kPython = SHARDSYNTH_PYTHON_EXE;  // the project's .venv (scripts/bootstrap)
const std::string kExporter = std::string(SHARDSYNTH_EXAMPLES_DIR) + "/export_fx.py";

// Solves with `synth ARGS --schedule FILE` and returns the schedule's cost;
// fails the test when synth fails or does not prove the plan optimal.
int64_t optimum(const std::string& args, const std::filesystem::path& schedule) {
  const auto r = run_command(kSynth + " " + args + " --quiet --schedule " + schedule.string());
  CAPTURE(args);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const auto plan = shardsynth::ir::schedule_from_json(nlohmann::json::parse(slurp(schedule)));
  CHECK(plan.proven_optimal);
  return plan.cost;
}

}  // namespace

TEST_CASE("export_fx_TorchMlpSolvesToTheBuiltinOptimum") {
  const auto dir = scratch_dir("fx_mlp");
  const auto graph = (dir / "mlp.json").string();
  const std::string sizes = " --batch 8 --seq 128 --hidden 256 --ffn 1024";
  const auto exported = run_command(kPython + " " + kExporter + " mlp" + sizes + " --out " + graph);
  CAPTURE(exported.err);
  REQUIRE(exported.exit_code == 0);
  for (const std::string model : {" --cost-model slapo", " --mesh 2x4", " --mesh 4 --mode training"}) {
    CAPTURE(model);
    CHECK(optimum(graph + model, dir / "a.json") == optimum("mlp" + sizes + model, dir / "b.json"));
    // Same node names, so the very same directives.
    CHECK(slurp(dir / "a.json") == slurp(dir / "b.json"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("export_fx_TorchGpt2SolvesToTheBuiltinOptimum") {
  const auto dir = scratch_dir("fx_gpt2");
  const auto graph = (dir / "gpt2.json").string();
  const std::string sizes = " --layers 2 --embd 256 --heads 4 --seq 128 --vocab 2048 --batch 8";
  const auto exported = run_command(kPython + " " + kExporter + " gpt2" + sizes + " --out " + graph);
  CAPTURE(exported.err);
  REQUIRE(exported.exit_code == 0);
  const auto j = nlohmann::json::parse(slurp(graph));
  int tied = 0;
  for (const auto& node : j["nodes"]) {
    for (const auto& p : node.value("params", nlohmann::json::array())) tied += p.value("tied_to", "") == "wte.weight";
  }
  CHECK(tied == 1);  // lm_head.weight shares wte's storage
  for (const std::string model : {" --mesh 8", " --cost-model slapo --mesh 4"}) {
    CAPTURE(model);
    CHECK(optimum(graph + model, dir / "a.json") == optimum("gpt2" + sizes + model, dir / "b.json"));
  }
  // synth's training graph ends in its loss head: the export with --loss does too.
  const auto with_loss = run_command(kPython + " " + kExporter + " gpt2" + sizes + " --loss --out " + graph);
  CAPTURE(with_loss.err);
  REQUIRE(with_loss.exit_code == 0);
  const std::string training = " --mesh 2x4 --mode training";
  CHECK(optimum(graph + training, dir / "a.json") == optimum("gpt2" + sizes + training, dir / "b.json"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("export_fx_TorchLlamaSolvesToTheBuiltinOptimum") {
  const auto dir = scratch_dir("fx_llama");
  const auto graph = (dir / "llama.json").string();
  // Grouped-query attention with an untied head, and a tied head with as many KV heads as query heads.
  const std::pair<std::string, std::string> sizes[] = {
      {" --layers 2 --hidden 128 --heads 8 --kv-heads 2 --ffn 256 --vocab 1024 --seq 64 --batch 8", " --mesh 8"},
      {" --layers 1 --hidden 64 --heads 4 --kv-heads 4 --ffn 160 --vocab 512 --seq 32 --batch 4 --tied",
       " --mesh 2x4 --mode training"},
  };
  for (const auto& [size, mesh] : sizes) {
    const auto size_text = size;  // clang 14 cannot capture a structured binding in CAPTURE
    CAPTURE(size_text);
    // A training graph ends in its loss head, as synth's does: the export with --loss.
    const std::string loss = mesh.find("training") != std::string::npos ? " --loss" : "";
    const auto exported = run_command(kPython + " " + kExporter + " llama" + size + loss + " --out " + graph);
    CAPTURE(exported.err);
    REQUIRE(exported.exit_code == 0);
    CHECK(optimum(graph + mesh, dir / "a.json") == optimum("llama" + size + mesh, dir / "b.json"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("export_fx_UnknownOpIsAnErrorOrKeptReplicated") {
  const auto dir = scratch_dir("fx_unknown");
  const auto graph = (dir / "sin.json").string();
  const auto exported = run_command(kPython + " " + std::string(SHARDSYNTH_E2E_DIR) + "/fx_unknown_op.py " +
                                    SHARDSYNTH_EXAMPLES_DIR + " " + graph);
  CAPTURE(exported.err);
  REQUIRE(exported.exit_code == 0);

  const auto refused = run_command(kSynth + " " + graph + " --mesh 4 --schedule " + (dir / "plan.json").string());
  CHECK(refused.exit_code == 2);
  CHECK(count_lines(refused.err) == 1);
  CHECK(refused.err.find("unknown op kind 'sin' at fx node 'sin'") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "plan.json"));

  const auto kept = run_command(kSynth + " --unknown-ops=replicate " + graph + " --mesh 4");
  CAPTURE(kept.err);
  REQUIRE(kept.exit_code == 0);
  CHECK(kept.err.find("[warning] " + graph + ": unknown op kind 'sin' at fx node 'sin': kept replicated") !=
        std::string::npos);
  CHECK(kept.out.find("sin: torch.sin") != std::string::npos);  // the graph table names the original op
  CHECK(kept.out.find("Best solution:") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("export_fx_CrossEntropyIsTheLossHead") {
  const auto dir = scratch_dir("fx_cross_entropy");
  const auto graph = (dir / "head.json").string();
  const auto exported = run_command(kPython + " " + std::string(SHARDSYNTH_E2E_DIR) + "/fx_cross_entropy.py " +
                                    SHARDSYNTH_EXAMPLES_DIR + " " + graph);
  CAPTURE(exported.err);
  REQUIRE(exported.exit_code == 0);
  std::ifstream in(graph);
  const auto json = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  int heads = 0;
  for (const auto& node : json["nodes"]) {
    if (node["kind"] != "cross_entropy") continue;
    ++heads;
    CHECK(node["shape"].empty());
    CHECK(node["real_attrs"]["divisor"] == 32.0);  // the mean over 4 x 8 labels
  }
  CHECK(heads == 1);
  const auto planned = run_command(kSynth + " --mode training --mesh 4 " + graph);
  CAPTURE(planned.err);
  CHECK(planned.exit_code == 0);
  CHECK(planned.out.find("Best solution:") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("export_fx_BadInputExitsTwoWithOneLine") {
  const auto dir = scratch_dir("fx_bad");
  const auto graph = (dir / "g.json").string();
  const auto r = run_command(kPython + " " + kExporter + " gpt2 --embd 64 --heads 5 --out " + graph);
  CHECK(r.exit_code == 2);
  CHECK(count_lines(r.err) == 1);
  CHECK(r.err.find("heads 5") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(graph));
  // synth: a graph file and a subcommand at once, a missing file, a bad policy.
  const std::pair<std::string, std::string> cases[] = {
      {"mlp " + graph, "not both"},
      {"/nonexistent/g.json", "/nonexistent/g.json"},
      {"--unknown-ops=ignore /nonexistent/g.json", "'ignore'"},
  };
  for (const auto& [args, needle] : cases) {
    // clang 14 cannot capture a structured binding in doctest's CAPTURE lambda: a named copy.
    const auto command_args = args;
    CAPTURE(command_args);
    const auto s = run_command(kSynth + " " + args);
    CHECK(s.exit_code == 2);
    CHECK(count_lines(s.err) == 1);
    CHECK(s.err.find(needle) != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
