#pragma once
// What the shard-run end-to-end tests share: running a schedule under
// mpirun with --check, and synthesizing a plan and running it.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "e2e/run_command.hpp"

namespace shardsynth::testing {

inline const std::string kSynthBin = SHARDSYNTH_SYNTH_BIN;
// Every run is bounded: a hang fails the test instead of stalling CI.
inline const std::string kMpirun =
    std::string("timeout 120 ") + SHARDSYNTH_MPIEXEC + " --allow-run-as-root --oversubscribe -np ";

// The command line of `shard-run --check` on `ranks` ranks.
inline std::string shard_run(int ranks, const std::string& schedule, const std::string& model) {
  return kMpirun + std::to_string(ranks) + " " + SHARDSYNTH_SHARD_RUN_BIN + " --check --schedule " + schedule + " " + model;
}

// The run ended well and every check said OK.
inline void expect_checked(const CommandResult& r) {
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("): OK\n") != std::string::npos);
  CHECK(r.out.find("MISMATCH") == std::string::npos);
}

// Writes the plan `synth_args` gives for `model` to a scratch file, runs it
// on `ranks` ranks under --check and returns what shard-run printed.
inline CommandResult synth_then_run(const std::string& synth_args, int ranks, const std::string& model) {
  const auto dir = scratch_dir("shard_run_plan");
  const std::string plan = (dir / "p.json").string();
  REQUIRE(run_command(kSynthBin + " --quiet --schedule " + plan + " " + synth_args + " " + model).exit_code == 0);
  const auto run = run_command(shard_run(ranks, plan, model));
  std::filesystem::remove_all(dir);
  return run;
}

}  // namespace shardsynth::testing
