// `synth --version` and `shard-run --version`: the project version and the
// git commit of the build, the same line the library reports (ir/version.hpp).
#include <doctest/doctest.h>

#include <regex>
#include <string>

#include "e2e/run_command.hpp"
#include "ir/version.hpp"

using namespace shardsynth::testing;

namespace {

// "<program> 0.1.0 (commit <40 hex digits>[-dirty])", or "(commit unknown)"
// from a source tree that is not a git checkout.
const std::regex kVersionLine(R"(^(synth|shard-run) [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{40}(-dirty)?|unknown)\)\n$)");

}  // namespace

TEST_CASE("version_SynthPrintsVersionAndCommit") {
  const auto r = run_command(std::string(SHARDSYNTH_SYNTH_BIN) + " --version");
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(std::regex_match(r.out, kVersionLine));
  CHECK(r.out == shardsynth::ir::version_line("synth") + "\n");
  CHECK(r.out.find(std::string(shardsynth::ir::git_commit())) != std::string::npos);
}

TEST_CASE("version_ShardRunPrintsVersionAndCommitWithoutMpirun") {
  const auto r = run_command(std::string(SHARDSYNTH_SHARD_RUN_BIN) + " --version");
  CHECK(r.exit_code == 0);
  CHECK(std::regex_match(r.out, kVersionLine));
  CHECK(r.out == shardsynth::ir::version_line("shard-run") + "\n");
}

TEST_CASE("version_ShardRunPrintsVersionUnderMpirun") {
  const auto r = run_command(std::string("timeout 120 ") + SHARDSYNTH_MPIEXEC + " --allow-run-as-root -q -np 1 " +
                             SHARDSYNTH_SHARD_RUN_BIN + " gpt2 --version");
  CHECK(r.exit_code == 0);
  CHECK(r.out == shardsynth::ir::version_line("shard-run") + "\n");
}

TEST_CASE("version_CommitIsTheSourceTreesHead") {
  // The build stamps the commit of the source tree; where that is a git
  // checkout (CI's clone, a developer's tree) it is HEAD.
  const auto head = run_command("git -C " SHARDSYNTH_SOURCE_DIR " rev-parse --verify HEAD");
  const std::string commit(shardsynth::ir::git_commit());
  if (head.exit_code != 0) {
    CHECK(commit == "unknown");
    return;
  }
  INFO("the commit is stamped when the build runs: build again after a commit");
  CHECK(commit.substr(0, 40) + "\n" == head.out);
  CHECK(shardsynth::ir::version() == SHARDSYNTH_PROJECT_VERSION);
}
