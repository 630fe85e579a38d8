// End-to-end tests of `shard-run` under mpirun: synthesized and hand-written
// schedules run on 2, 4 and 8 CPU ranks and are checked against the
// unsharded model, with bytes equal to the cost model's ring volume.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"
#include "e2e/run_grid.hpp"
#include "e2e/shard_run_helpers.hpp"
#include "ir/model_cli.hpp"
#include "ir/op_table.hpp"
#include "runtime/safetensors.hpp"

using namespace shardsynth::testing;

namespace {

const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
const std::string kSchedules = SHARDSYNTH_SCHEDULES_DIR;
const char* kMlp = "mlp --batch 8 --seq 16 --hidden 32 --ffn 64";
const char* kGpt2 = "gpt2 --layers 2 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256";

}  // namespace

TEST_CASE("shard_run_SynthesizedSchedulesMatchTheUnshardedModel") {
  const auto dir = scratch_dir("shard_run");
  for_each_run_case({{2, "2"}, {4, "4"}, {4, "2x2"}, {8, "8"}, {8, "2x4"}}, {kMlp, kGpt2},
                    {"", " --mode training --plan megatron", " --peak-tflops 0.001 --mode training"},
                    [&](const RunCase& c) {
                      const std::string plan = (dir / "plan.json").string();
                      const auto synth = run_command(kSynth + " --quiet --mesh " + c.mesh + c.options + " --schedule " +
                                                     plan + " " + c.model);
                      REQUIRE(synth.exit_code == 0);
                      expect_checked(run_command(shard_run(c.ranks, plan, c.model)));
                    });
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
      // 2x2: gather x's batch off axis 1, slice seq onto axis 0, all-to-all it onto ffn, all-reduce fc2's sum.
      {"mlp_2d_gather_all_to_all_all_reduce_2x2.json", "all_gather                        512                  512"},
      {"mlp_2d_gather_all_to_all_all_reduce_2x2.json", "all_to_all                        512                  512"},
      {"mlp_2d_gather_all_to_all_all_reduce_2x2.json", "all_reduce                       1024                 1024"},
  };
  for (const auto& [file, line] : cases) {
    const auto schedule_file = file;
    CAPTURE(schedule_file);
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

TEST_CASE("shard_run_ParamsInputOutputSafetensors") {
  using shardsynth::runtime::Tensor;
  const auto dir = scratch_dir("shard_run_safetensors");
  const std::string model = "gpt2 --layers 1 --embd 32 --heads 2 --seq 8 --batch 2 --vocab 64";
  shardsynth::ir::ModelFlags flags;
  flags.gpt2.n_layer = 1;
  flags.gpt2.n_embd = 32;
  flags.gpt2.n_head = 2;
  flags.gpt2.seq = 8;
  flags.gpt2.batch = 2;
  flags.gpt2.vocab = 64;
  const shardsynth::ir::Graph graph = shardsynth::ir::build_model(flags, "gpt2");

  // Every parameter under its Hugging Face name (half of them with the
  // checkpoint's "transformer." prefix), tied lm_head.weight left out as in
  // a real checkpoint; values from a fixed LCG, not the runtime's seed.
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(static_cast<double>(state >> 40) / static_cast<double>(1 << 24) - 0.5) * 0.2f;
  };
  std::map<std::string, Tensor> params;
  std::string output_name;
  int index = 0;
  for (auto v : graph.topological_order()) {
    const auto& node = graph.node(v);
    if (node.kind == shardsynth::ir::kOutput) output_name = node.name;
    for (const auto& p : node.params) {
      if (!p.tied_to.empty()) continue;
      Tensor t{p.type.shape, {}};
      t.data.resize(static_cast<std::size_t>(t.numel()));
      for (float& x : t.data) x = next() + (p.name == "weight" && node.name.find("ln_") != std::string::npos ? 1.0f : 0.0f);
      params.emplace((index++ % 2 ? "transformer." : "") + node.name + "." + p.name, std::move(t));
    }
  }
  REQUIRE(params.count("h.0.ln_1.bias") + params.count("transformer.h.0.ln_1.bias") == 1);
  REQUIRE(params.count("lm_head.weight") == 0);
  const std::string params_path = (dir / "params.safetensors").string();
  shardsynth::runtime::write_safetensors(params_path, params);

  Tensor ids{{2, 8}, {}};
  for (int i = 0; i < 16; ++i) ids.data.push_back(static_cast<float>((i * 37 + 5) % 64));
  const std::string input_path = (dir / "input.safetensors").string();
  shardsynth::runtime::write_safetensors(input_path, {{"input_ids", ids}});

  const std::string plan = (dir / "plan.json").string();
  // Megatron's plan, so the loaded weights really are sharded across the ranks;
  // an inference plan, whose graph ends in the logits (a training plan's ends
  // in its loss head, and a forward run of it writes the loss).
  REQUIRE(run_command(kSynth + " --quiet --mesh 2 --plan megatron --schedule " + plan + " " + model)
              .exit_code == 0);
  const std::string output_path = (dir / "logits.safetensors").string();
  const std::string base = kMpirun + "2 " + SHARDSYNTH_SHARD_RUN_BIN + " --check --schedule " + plan;
  const auto run = run_command(base + " --params " + params_path + " --input " + input_path + " --output " +
                               output_path + " " + model);
  CAPTURE(run.out);
  CAPTURE(run.err);
  expect_checked(run);
  const auto output = shardsynth::runtime::read_safetensors(output_path);
  REQUIRE(output.size() == 1);
  REQUIRE(output.count(output_name) == 1);
  CHECK(output.at(output_name).shape == std::vector<int64_t>{2, 8, 64});

  // The loaded weights matter: the seeded run gives different logits.
  const std::string seeded_path = (dir / "seeded.safetensors").string();
  REQUIRE(run_command(base + " --input " + input_path + " --output " + seeded_path + " " + model).exit_code == 0);
  CHECK(shardsynth::runtime::read_safetensors(seeded_path).at(output_name) != output.at(output_name));

  // A missing parameter: every rank stops before communicating, one message names it.
  auto missing = params;
  missing.erase("h.0.ln_1.bias");
  missing.erase("transformer.h.0.ln_1.bias");
  const std::string missing_path = (dir / "missing.safetensors").string();
  shardsynth::runtime::write_safetensors(missing_path, missing);
  auto r = run_command(base + " --params " + missing_path + " " + model);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find(missing_path + ": missing parameter 'h.0.ln_1.bias'") != std::string::npos);
  CHECK(r.err.find("shard-run: error:") == r.err.rfind("shard-run: error:"));  // one message, from rank 0

  // A wrong input shape names the input.
  const std::string bad_input = (dir / "bad_input.safetensors").string();
  shardsynth::runtime::write_safetensors(bad_input, {{"input_ids", Tensor{{1, 8}, std::vector<float>(8, 1.0f)}}});
  r = run_command(base + " --input " + bad_input + " " + model);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("input 'input_ids' has shape [1, 8]") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// Issue 21's command: the only gather of this plan is of the int64 token
// ids, which shard-run sent at 4 bytes an element (128) while the cost model
// priced 8 (256). Found again by the random-plan sweep (plan_sweep/gpt2).
TEST_CASE("shard_run_Int64TokenIdsGatherAtTheirPricedSize") {
  const auto run = synth_then_run("--mesh 2x4 --mode training --plan megatron --pin input_ids=S0R", 8,
                                  "gpt2 --layers 2 --batch 2 --seq 32 --embd 128 --heads 4 --vocab 512");
  expect_checked(run);
  CHECK(run.out.find("all_gather                        256                  256\n") != std::string::npos);
}

// A half-precision model is priced at 2 bytes an element, and the runtime
// sends it so: every op's result rounded to the dtype, every element on the
// wire as 16 bits. The same plan of the same model in fp32 sends twice the bytes.
TEST_CASE("shard_run_HalfPrecisionModelSendsTwoBytesAnElement") {
  const std::string mlp = "mlp --batch 8 --seq 16 --hidden 32 --ffn 64";
  const auto fp32 = synth_then_run("--mesh 2 --plan megatron", 2, mlp);
  expect_checked(fp32);
  for (const char* dtype : {"--dtype float16 ", "--dtype bf16 "}) {
    CAPTURE(dtype);
    const auto run = synth_then_run("--mesh 2 --plan megatron", 2, dtype + mlp);
    expect_checked(run);
    CHECK(run.out.find("(tolerance 1e-02): OK") != std::string::npos);
    const auto row = [](const std::string& out) { return out.substr(out.find("\ntotal"), 60); };
    const std::string half = row(run.out), full = row(fp32.out);
    CAPTURE(half);
    CAPTURE(full);
    const auto bytes = [](const std::string& r) { return std::stoll(r.substr(6)); };
    CHECK(bytes(half) > 0);
    CHECK(2 * bytes(half) == bytes(full));
  }
}

// The sweep's reproduction of its first int64 find on a 1-D mesh (plan_sweep
// before the fix: "all_gather sent 344352 bytes, priced 344640", shrunk to
// `position_ids: RS`): the random plan of seed 4 gathers the sequence-sharded
// position ids, 8 bytes an element.
TEST_CASE("shard_run_RandomPlanGathersInt64PositionIds") {
  const auto run = synth_then_run("--mesh 2 --mode inference --plan random --seed 4", 2, kGpt2);
  expect_checked(run);
  CHECK(run.out.find("all_gather                     344640               344640\n") != std::string::npos);
}
