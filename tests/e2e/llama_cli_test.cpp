// End-to-end tests of `synth llama` and `shard-run llama`: small Llama
// configurations (grouped-query attention with fewer KV heads than the
// tensor-parallel degree; a tied and an untied head) planned by the solver
// and by Megatron's family run under mpirun --check on 2, 4 and 8 ranks;
// weights load by Hugging Face names; bad model flags are one line, exit 2.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"
#include "e2e/run_grid.hpp"
#include "e2e/shard_run_helpers.hpp"
#include "ir/llama.hpp"
#include "ir/schedule.hpp"
#include "runtime/safetensors.hpp"

using namespace shardsynth::testing;

namespace {

// 4 query heads over 2 KV heads of dim 16, untied head.
const char* kGqa = "llama --layers 2 --hidden 64 --heads 4 --kv-heads 2 --ffn 96 --vocab 256 --seq 16 --batch 8";
// 8 query heads over 4 KV heads of dim 8, tied head.
const char* kTied = "llama --layers 1 --hidden 64 --heads 8 --kv-heads 4 --ffn 96 --vocab 256 --seq 16 --batch 8 --tied";

}  // namespace

TEST_CASE("shard_run_LlamaPlansMatchTheUnshardedModel") {
  for_each_run_case({{2, "2"}, {4, "4"}, {8, "8"}, {8, "2x4"}}, {kGqa, kTied},
                    {"", " --mode training", " --mode training --plan megatron"}, [&](const RunCase& c) {
                      const auto run = synth_then_run(std::string("--mesh ") + c.mesh + c.options, c.ranks, c.model);
                      CAPTURE(run.out);
                      CAPTURE(run.err);
                      expect_checked(run);
                    });
}

TEST_CASE("synth_LlamaOptimumIsNeverAboveMegatron") {
  const auto dir = scratch_dir("llama_megatron");
  const std::string plan = (dir / "plan.json").string();
  auto cost = [&](const std::string& args) {
    const auto r = run_command(kSynthBin + " --quiet --mode training --schedule " + plan + " " + args + " " + kGqa);
    CAPTURE(args);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const auto schedule = shardsynth::ir::schedule_from_json(nlohmann::json::parse(slurp(plan)));
    CHECK(schedule.proven_optimal);
    return schedule.cost;
  };
  for (const std::string mesh : {"--mesh 4", "--mesh 2x4"}) {
    const int64_t best = cost(mesh);
    CHECK(best <= cost(mesh + " --plan megatron"));
    CHECK(best <= cost(mesh + " --plan data-parallel"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("shard_run_LlamaParamsByHuggingFaceNames") {
  using shardsynth::runtime::Tensor;
  const auto dir = scratch_dir("llama_params");
  const std::string model =
      "llama --preset llama-3.2-1b --layers 1 --hidden 64 --heads 4 --kv-heads 2 --ffn 96 --vocab 256 --seq 8 --batch 2";
  // The same sizes; llama-3.2-1b's head is tied.
  const auto graph = shardsynth::ir::build_llama({.n_layer = 1, .hidden = 64, .n_head = 4, .n_kv_head = 2, .ffn = 96,
                                                  .vocab = 256, .seq = 8, .batch = 2, .tied = true});
  // Every parameter with storage of its own, by its Hugging Face name, from a fixed LCG in [-0.1, 0.1).
  std::map<std::string, Tensor> params;
  uint32_t state = 16;
  for (auto v : graph.topological_order()) {
    for (const auto& p : graph.node(v).params) {
      if (!p.tied_to.empty()) continue;
      Tensor t{p.type.shape, {}};
      t.data.resize(static_cast<std::size_t>(t.numel()));
      for (float& x : t.data) x = static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 83886080.0f - 0.1f;
      params.emplace(graph.node(v).name + "." + p.name, std::move(t));
    }
  }
  REQUIRE(params.count("model.layers.0.self_attn.k_proj.weight") == 1);
  REQUIRE(params.count("lm_head.weight") == 0);  // tied, as in the checkpoint
  const std::string params_path = (dir / "model.safetensors").string();
  shardsynth::runtime::write_safetensors(params_path, params);
  const std::string plan = (dir / "plan.json").string();
  REQUIRE(run_command(kSynthBin + " --quiet --mesh 2 --mode training --plan megatron --schedule " + plan + " " + model)
              .exit_code == 0);
  const std::string base = kMpirun + "2 " + SHARDSYNTH_SHARD_RUN_BIN + " --check --schedule " + plan;
  const std::string out_path = (dir / "logits.safetensors").string();
  const auto run = run_command(base + " --params " + params_path + " --output " + out_path + " " + model);
  CAPTURE(run.err);
  expect_checked(run);
  const std::string seeded_path = (dir / "seeded.safetensors").string();
  REQUIRE(run_command(base + " --output " + seeded_path + " " + model).exit_code == 0);
  CHECK(shardsynth::runtime::read_safetensors(seeded_path).at("output") !=
        shardsynth::runtime::read_safetensors(out_path).at("output"));

  params.erase("model.layers.0.mlp.up_proj.weight");
  const std::string missing_path = (dir / "missing.safetensors").string();
  shardsynth::runtime::write_safetensors(missing_path, params);
  const auto r = run_command(base + " --params " + missing_path + " " + model);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find(missing_path + ": missing parameter 'model.layers.0.mlp.up_proj.weight'") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_LlamaBadFlagsAreOneLineExitTwo") {
  const std::pair<std::string, std::string> cases[] = {
      {"--kv-heads 3", "llama n_kv_head 3 does not divide n_head 32"},
      {"--hidden 60 --heads 4 --kv-heads 4", "llama head dim 15 (hidden 60 / n_head 4) is odd"},
      {"--heads 6", "llama n_head 6 does not divide hidden 4096"},
      {"--layers -1", "--layers: '-1' must be above 0"},
      {"--layers 0", "--layers: '0' must be above 0"},
      {"--ffn 0", "--ffn: '0' must be above 0"},
      {"--layers 100000000", "llama n_layer 100000000 exceeds 1000"},
      {"--preset llama-9", "unknown llama preset 'llama-9'"},
      {"--preset llama-2-7b --seq 5000", "llama seq 5000 exceeds max_positions 4096"},
  };
  for (const auto& [flags, needle] : cases) {
    const auto flag_text = flags;  // clang 14 cannot capture a structured binding in CAPTURE
    CAPTURE(flag_text);
    for (const std::string& command : {kSynthBin + " llama " + flags,
                                      std::string(SHARDSYNTH_SHARD_RUN_BIN) + " --schedule none.json llama " + flags}) {
      const auto r = run_command(command);
      CAPTURE(r.err);
      CHECK(r.exit_code == 2);
      CHECK(count_lines(r.err) == 1);
      CHECK(r.err.find(needle) != std::string::npos);
    }
  }
}
