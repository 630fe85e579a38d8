// The examples in docs/ are held to the code: each must be read by the
// reader of its format, and an example that claims to be a command's output
// must be exactly that output.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "doc_examples.hpp"
#include "e2e/run_command.hpp"
#include "e2e/trace_lines.hpp"
#include "ir/schedule.hpp"
#include "ir/spec.hpp"
#include "synth/report/trace_jsonl.hpp"

using namespace shardsynth::testing;

namespace {
const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
const std::string kDocs = SHARDSYNTH_DOCS_DIR;
}  // namespace

TEST_CASE("schedule_from_json_DocumentedExamplesParse") {
  const auto blocks = fenced_blocks(kDocs + "/schedule_json.md", "json");
  REQUIRE(blocks.size() == 2);
  for (const auto& block : blocks) {
    const auto schedule = shardsynth::ir::schedule_from_json(nlohmann::json::parse(block));
    CHECK_FALSE(schedule.directives.empty());
    CHECK(nlohmann::json::parse(block) == shardsynth::ir::to_json(schedule));  // nothing in it is ignored
    const int mesh_rank = static_cast<int>(schedule.mesh.size());
    for (const auto& t : schedule.specs) CHECK_NOTHROW(shardsynth::ir::parse_spec(t.spec, mesh_rank));
    for (const auto& d : schedule.directives) {
      if (d.kind != shardsynth::ir::DirectiveKind::sync) continue;
      const auto arrow = d.sync_op.find("->");
      REQUIRE(arrow != std::string::npos);
      CHECK_NOTHROW(shardsynth::ir::parse_spec(d.sync_op.substr(0, arrow), mesh_rank));
      CHECK_NOTHROW(shardsynth::ir::parse_spec(d.sync_op.substr(arrow + 2), mesh_rank));
    }
  }
  // The first example is what synth writes for the seed MLP, byte for byte.
  const auto dir = scratch_dir("doc_schedule");
  const auto path = (dir / "plan.json").string();
  REQUIRE(run_command(kSynth + " mlp --cost-model slapo --mesh 8 --quiet --schedule " + path).exit_code == 0);
  CHECK(slurp(path) == blocks[0]);
  std::filesystem::remove_all(dir);
}

TEST_CASE("read_trace_DocumentedExampleIsTheSeedMlpRun") {
  const auto examples = fenced_blocks(kDocs + "/trace_jsonl.md", "jsonl");
  REQUIRE(examples.size() == 1);
  const auto dir = scratch_dir("doc_trace");
  const auto documented = (dir / "documented.jsonl").string(), recorded = (dir / "mlp.jsonl").string();
  {
    std::ofstream out(documented, std::ios::binary);
    out << examples[0];
  }
  // The reader accepts it, and every line is what the seed run writes, timings aside.
  const auto trace = shardsynth::synth::read_trace(documented);
  CHECK(trace.steps.size() == 2);
  REQUIRE(run_command(kSynth + " mlp --cost-model slapo --mesh 8 --quiet --trace " + recorded).exit_code == 0);
  CHECK(untimed_trace_lines(examples[0]) == untimed_trace_lines(slurp(recorded)));
  // Sorted keys, no spaces: the example is the file's bytes, timings aside.
  const std::regex timing("\"solver_ms\":[0-9.e+-]+");
  CHECK(std::regex_replace(examples[0], timing, "\"solver_ms\":0") == std::regex_replace(slurp(recorded), timing, "\"solver_ms\":0"));
  // The two printed examples are `synth trace` on the example file.
  const auto printed = fenced_blocks(kDocs + "/trace_jsonl.md", "text");
  REQUIRE(printed.size() == 2);
  CHECK(run_command(kSynth + " trace " + documented + " --iter 0").out == printed[0]);
  CHECK(run_command(kSynth + " trace " + documented).out == printed[1]);
  std::filesystem::remove_all(dir);
}
