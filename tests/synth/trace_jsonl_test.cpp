// The trace's JSON form: a step holds what the live table printed, the
// writer and reader round-trip it, and bad files are named.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/models.hpp"
#include "ir/text_table.hpp"
#include "synth/report/iteration_table.hpp"
#include "synth/report/trace_replay.hpp"
#include "synth/report/trace_jsonl.hpp"
#include "synth/synthesizer.hpp"

using namespace shardsynth;

namespace {

// The seed MLP (slapo, p = 8) solved with the default search, every step kept.
struct SeedRun {
  std::vector<synth::Iteration> steps;  // the steps as the callback saw them
  synth::SynthResult result;            // the run
};

const SeedRun& seed_run() {
  static const SeedRun run = [] {
    SeedRun r;
    const auto model = costs::make_cost_model("slapo");
    r.result = synth::synthesize(ir::build_mlp({}), ir::parse_mesh("8"), *model, {},
                                 [&](const synth::Lowered&, const synth::Iteration& it) { r.steps.push_back(it); });
    return r;
  }();
  return run;
}

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("shardsynth_trace_test_" + name);
}

void write_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string error_of(const std::string& path) {
  try {
    synth::read_trace(path);
  } catch (const ir::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("iteration_to_json_SatStepHoldsTheTableRows") {
  const auto& run = seed_run();
  const auto& lowered = run.result.lowered;
  REQUIRE_FALSE(run.steps.empty());
  const auto& first = run.steps.front();
  REQUIRE(first.status == synth::CheckStatus::sat);
  const auto j = synth::iteration_to_json(lowered, first);
  CHECK(j.at("step") == 0);
  CHECK(j.at("status") == "sat");
  CHECK(j.at("cost") == first.cost);
  synth::Assignment decided;  // the decision nodes' entries: followers left out
  for (int n : synth::decision_nodes(lowered)) decided.push_back(first.assignment.at(n));
  CHECK(decided.size() == 4);  // x, fc1, fc2, output
  CHECK(j.at("assignment").get<synth::Assignment>() == decided);
  CHECK(j.at("total") == 131072);
  CHECK(j.at("rows").size() == 5);  // fc1, |-x, fc2, |-gelu, output
  CHECK(j.at("rows").back().at("name") == "output");
  CHECK(j.at("rows").back().at("cost") == 131072);
  CHECK(synth::table_from_json(j) == synth::format_iteration_table(lowered, first.assignment));
}

TEST_CASE("iteration_to_json_UnsatStepHasBoundButNoAssignment") {
  const auto& run = seed_run();
  const auto& last = run.steps.back();
  REQUIRE(last.status == synth::CheckStatus::unsat);
  const auto j = synth::iteration_to_json(run.result.lowered, last);
  CHECK(j.at("status") == "unsat");
  CHECK(j.at("bound") == 131072);
  CHECK_FALSE(j.contains("assignment"));
  CHECK_FALSE(j.contains("rows"));
}

TEST_CASE("JsonlTraceWriter_RoundTripsThroughReadTrace") {
  const auto& run = seed_run();
  const auto path = temp_file("roundtrip.jsonl");
  synth::JsonlTraceWriter writer(path.string(), {{"model", "mlp"}});
  for (const auto& it : run.steps) writer.add(run.result.lowered, it);
  writer.finish();
  const auto trace = synth::read_trace(path.string());
  CHECK(trace.header.at("format") == synth::kTraceFormat);
  CHECK(trace.header.at("options").at("model") == "mlp");
  CHECK(trace.labels == std::vector<std::string>{"x", "fc1", "fc2", "output"});  // followers left out
  REQUIRE(trace.steps.size() == run.steps.size());
  std::optional<int64_t> best;
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    CHECK(trace.steps[i] == synth::iteration_to_json(run.result.lowered, run.steps[i]));
    CHECK(synth::recorded_iteration(trace, static_cast<int64_t>(i)) ==
          synth::iteration_block(trace.labels, trace.steps[i], best));
    if (run.steps[i].status == synth::CheckStatus::sat) best = run.steps[i].cost;
  }
  std::filesystem::remove(path);
}

TEST_CASE("iteration_block_PrintsTheLiveLayout") {
  const auto& run = seed_run();
  const auto& lowered = run.result.lowered;
  const auto& first = run.steps.front();
  CHECK(synth::iteration_block(synth::problem_labels(lowered), synth::iteration_to_json(lowered, first), std::nullopt) ==
        "=================== Iter 0 ===================\n" + synth::model_text(lowered, first.assignment) + "\n" +
            ir::as_logged(synth::format_iteration_table(lowered, first.assignment)) + "\n\n");
  const nlohmann::json unsat = {{"step", 3}, {"status", "unsat"}, {"bound", 100}, {"solver_ms", 1.0}};
  CHECK(synth::iteration_block({}, unsat, 100) == "=================== Iter 3 ===================\nCannot find better solutions\n");
  CHECK(synth::iteration_block({}, unsat, 200) == "=================== Iter 3 ===================\nNo solution below 100\n");
}

TEST_CASE("trace_summary_ListsStepsAndVerdict") {
  synth::TraceFile trace;
  trace.labels = {"a"};
  trace.steps = {
      {{"step", 0}, {"source", "dual"}, {"bound", nullptr}, {"status", "sat"}, {"solver_ms", 0.25}, {"cost", 40}},
      {{"step", 1}, {"source", "z3"}, {"bound", 20}, {"status", "unsat"}, {"solver_ms", 1.5}},
      {{"step", 2}, {"source", "z3"}, {"bound", 40}, {"status", "sat"}, {"solver_ms", 2.0}, {"cost", 30}},
      {{"step", 3}, {"source", "z3"}, {"bound", 30}, {"status", "unsat"}, {"solver_ms", 12.25}},
  };
  CHECK(synth::trace_summary(trace) ==
        "Step    Source    Bound    Status    Cost    ms\n"
        "------  --------  -------  --------  ------  ----\n"
        "0       dual      -        sat       40      0.2\n"
        "1       z3        < 20     unsat             1.5\n"
        "2       z3        < 40     sat       30      2.0\n"
        "3       z3        < 30     unsat             12.2\n"
        "best cost 30, proven optimal\n");
  trace.steps.pop_back();
  CHECK(synth::trace_summary(trace).find("best cost 30, not proven optimal\n") != std::string::npos);
}

TEST_CASE("read_trace_BadFilesAreNamed") {
  const auto path = temp_file("bad.jsonl");
  CHECK(error_of((path.string() + ".missing")).find(path.string() + ".missing") != std::string::npos);
  write_text(path, "");
  CHECK(error_of(path.string()) == path.string() + ": not a shardsynth trace (the file is empty)");
  write_text(path, "{\"format\": \"shardsynth.schedule/1\"}\n");
  CHECK(error_of(path.string()).find("not a shardsynth trace") != std::string::npos);
  write_text(path, "{\"format\": \"shardsynth.trace/1\", \"labels\": [\"x\"]}\n{oops\n");
  CHECK(error_of(path.string()).rfind(path.string() + ": line 2 is not valid JSON", 0) == 0);
  write_text(path, "{\"format\": \"shardsynth.trace/1\", \"labels\": [\"x\"]}\n"
                   "{\"step\": 0, \"status\": \"maybe\", \"bound\": null, \"solver_ms\": 1}\n");
  CHECK(error_of(path.string()) == path.string() + ": line 2 has status 'maybe' (known: sat, unsat, unknown)");
  write_text(path, "{\"format\": \"shardsynth.trace/1\", \"labels\": [\"x\"]}\n"
                   "{\"step\": 0, \"status\": \"sat\", \"bound\": null, \"solver_ms\": 1, \"cost\": 1, \"total\": 1,"
                   " \"assignment\": [0, 1], \"rows\": []}\n");
  CHECK(error_of(path.string()).find("assignment does not have one entry per label (1)") != std::string::npos);
  std::filesystem::remove(path);
}

TEST_CASE("recorded_iteration_OutOfRangeNamesTheStep") {
  synth::TraceFile trace;
  trace.steps = {{{"step", 0}, {"status", "unknown"}, {"bound", nullptr}, {"solver_ms", 0.0}}};
  CHECK(synth::recorded_iteration(trace, 0) == "=================== Iter 0 ===================\n");
  CHECK_THROWS_WITH_AS(synth::recorded_iteration(trace, 7), "--iter 7: the trace has steps 0 to 0", ir::InputError);
  CHECK_THROWS_AS(synth::recorded_iteration(trace, -1), ir::InputError);
}
