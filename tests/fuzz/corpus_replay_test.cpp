// Replays every seed-corpus and regression input of every fuzz harness
// (tests/fuzz/corpus/<harness>/, tests/fuzz/regressions/<harness>/) through
// the same target functions libFuzzer runs, so the inputs that once crashed
// stay fixed in every ordinary test run, built with g++.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_targets.hpp"

namespace {

namespace fs = std::filesystem;

// The files under `dir`, in name order (none when it does not exist).
std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `target` on every file of the harness's corpus and regressions; returns how many.
std::size_t replay(const shardsynth::fuzz::NamedTarget& target) {
  std::size_t count = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    for (const fs::path& file : files_in(fs::path(SHARDSYNTH_FUZZ_DIR) / kind / target.name)) {
      CAPTURE(file.string());
      CHECK_NOTHROW(target.run(bytes_of(file)));
      ++count;
    }
  }
  return count;
}

}  // namespace

TEST_CASE("fuzz_EveryHarnessReplaysItsCorpusAndRegressions") {
  for (const auto& target : shardsynth::fuzz::targets()) {
    CAPTURE(target.name);
    CHECK(replay(target) >= 3);  // each harness has a seed corpus
  }
}

TEST_CASE("fuzz_TargetsRejectBadBytesWithoutThrowing") {
  for (const auto& target : shardsynth::fuzz::targets()) {
    CAPTURE(target.name);
    for (const std::string& bytes : {std::string(), std::string("\0\0\0", 3), std::string("{"), std::string("[]"),
                                    std::string("\xff\xff\xff\xff\xff\xff\xff\xff{}", 10)}) {
      CHECK_NOTHROW(target.run(bytes));
    }
  }
}

TEST_CASE("iopddl_HugeCostsAndUsagesScoreWithoutOverflow") {
  // Eleven costs and usages of 9e17 each read fine (each is below 10^18) but
  // sum past int64: evaluate() used to wrap to a negative cost, which the
  // target reports as a broken invariant.
  CHECK_NOTHROW(shardsynth::fuzz::iopddl(
      R"({"problem": {"nodes": {"intervals": [[0,1],[0,1],[0,1],[0,1],[0,1],[0,1],[0,1],[0,1],[0,1],[0,1],[0,1]],)"
      R"("costs": [[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17]],)"
      R"("usages": [[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17],[9e17]]},)"
      R"("edges": {"nodes": [], "costs": []}, "usage_limit": 1000000000000000000}})"));
}
