// Determinism: the same problem solved twice gives byte-identical schedules,
// solutions and printed traces (solver milliseconds masked: they are the
// only timings). The engine runs Z3 single-threaded with seed 0, so there is
// no thread count to vary.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "e2e/run_command.hpp"

using namespace shardsynth::testing;

namespace {

const std::string kSynth = SHARDSYNTH_SYNTH_BIN;

// The text with every "<number> ms" replaced by "# ms".
std::string mask_ms(const std::string& text) {
  static const std::regex ms("[0-9]+(\\.[0-9]+)? ms");
  return std::regex_replace(text, ms, "# ms");
}

// Runs `args` twice, writing --schedule/--solution into `dir`, and requires
// identical outputs.
void expect_same_twice(const std::filesystem::path& dir, const std::string& args, bool schedule) {
  std::string outputs[2], traces[2];
  for (int run = 0; run < 2; ++run) {
    const std::string tag = std::to_string(run);
    std::string command = kSynth + " " + args + " --verbose --solution " + (dir / ("solution" + tag + ".json")).string();
    if (schedule) command += " --schedule " + (dir / ("schedule" + tag + ".json")).string();
    const auto r = run_command(command);
    REQUIRE(r.exit_code == 0);
    outputs[run] = mask_ms(r.out);
    traces[run] = mask_ms(r.err);
  }
  CHECK(outputs[0] == outputs[1]);
  CHECK(traces[0] == traces[1]);
  CHECK((outputs[0] + traces[0]).find("# ms") != std::string::npos);  // solver timings were there, masked
  CHECK(slurp(dir / "solution0.json") == slurp(dir / "solution1.json"));
  if (schedule) {
    CHECK(!slurp(dir / "schedule0.json").empty());
    CHECK(slurp(dir / "schedule0.json") == slurp(dir / "schedule1.json"));
  }
}

}  // namespace

TEST_CASE("synth_Gpt2TwiceGivesByteIdenticalScheduleAndTrace") {
  const auto dir = scratch_dir("determinism_gpt2");
  expect_same_twice(dir, "gpt2 --layers 4 --mesh 2x4 --mode training --memory 6000000000", true);
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_IopddlTwiceGivesByteIdenticalSolutionAndTrace") {
  // The contest's problem G when the shared benchmark directory is there
  // (bench/synth_bench uses the same), else GPT-2 exported in contest format.
  const auto dir = scratch_dir("determinism_iopddl");
  std::filesystem::path problem = std::filesystem::path(SHARDSYNTH_IOPDDL_DIR) / "asplos-2025-iopddl-G.json.gz";
  if (!std::filesystem::exists(problem)) {
    MESSAGE("no " << problem.string() << ": using an exported GPT-2 problem");
    problem = dir / "gpt2.json";
    REQUIRE(run_command(kSynth + " gpt2 --layers 2 --mesh 2x4 --mode training --memory 3000000000 -q --export-problem " +
                        problem.string())
                .exit_code == 0);
  }
  expect_same_twice(dir, "--iopddl " + problem.string(), false);
  std::filesystem::remove_all(dir);
}
