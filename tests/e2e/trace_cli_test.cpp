// End-to-end tests of `synth --trace/--dot/--svg`, `synth trace` and the
// progress line.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "e2e/run_command.hpp"
#include "e2e/trace_lines.hpp"
#include "golden.hpp"

using namespace shardsynth::testing;

namespace {
const std::string kSynth = SHARDSYNTH_SYNTH_BIN;
// A run with many steps: sat steps that improve, unsat probes below them, and the final proof.
// (Recomputation off: the golden steps below are those of saving every activation.)
const std::string kLongRun = " mlp --mesh 2x4 --mode training --memory 100000000 --no-dual --no-recompute";

// The part of the live stdout that the steps printed: from the first Iter header to the "Best solution" block.
std::string live_steps(const std::string& out) {
  const auto begin = out.find("=================== Iter 0 ===================\n");
  const auto end = out.find("\nBest solution");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  return out.substr(begin, end - begin);
}

}  // namespace

TEST_CASE("synth_TraceReprintsEveryIterationByteIdentically") {
  const auto dir = scratch_dir("trace_reprint");
  for (const auto& args : std::vector<std::string>{" mlp --cost-model slapo --mesh 8", kLongRun}) {
    CAPTURE(args);
    const auto trace = (dir / "run.jsonl").string();
    const auto live = run_command(kSynth + args + " --trace " + trace);
    REQUIRE(live.exit_code == 0);
    const auto steps = untimed_trace_lines(slurp(trace)).size() - 1;  // less the header
    REQUIRE(steps >= 2);
    std::string reprinted;
    for (std::size_t n = 0; n < steps; ++n) {
      const auto r = run_command(kSynth + " trace " + trace + " --iter " + std::to_string(n));
      REQUIRE(r.exit_code == 0);
      CHECK(r.err.empty());
      reprinted += r.out;
    }
    CHECK(reprinted == live_steps(live.out));
  }
  // The long run holds both unsat messages and more than one table.
  const auto r = run_command(kSynth + " trace " + (dir / "run.jsonl").string() + " --iter=3");
  CHECK(r.out == "=================== Iter 3 ===================\nNo solution below 419559\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_TraceSummaryListsEveryStep") {
  const auto dir = scratch_dir("trace_summary");
  const auto trace = (dir / "run.jsonl").string();
  REQUIRE(run_command(kSynth + kLongRun + " --quiet --trace " + trace).exit_code == 0);
  const auto steps = untimed_trace_lines(slurp(trace)).size() - 1;
  const auto r = run_command(kSynth + " trace " + trace);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("Step    Source    Bound      Status    Cost     ms\n", 0) == 0);
  CHECK(count_lines(r.out) == static_cast<int>(steps) + 3);  // header, rule, steps, verdict
  CHECK(r.out.find("\n0       z3        -          sat       3575645  ") != std::string::npos);
  const std::string verdict = "best cost 671129, proven optimal\n";
  CHECK(r.out.substr(r.out.size() - verdict.size()) == verdict);
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_TraceIsDeterministicExceptTimings") {
  const auto dir = scratch_dir("trace_determinism");
  const auto a = (dir / "a.jsonl").string(), b = (dir / "b.jsonl").string();
  REQUIRE(run_command(kSynth + kLongRun + " --quiet --trace " + a).exit_code == 0);
  REQUIRE(run_command(kSynth + kLongRun + " --quiet --trace " + b).exit_code == 0);
  const auto lines = untimed_trace_lines(slurp(a));
  CHECK(lines == untimed_trace_lines(slurp(b)));
  REQUIRE(lines.size() > 3);
  CHECK(lines[0].at("options").at("mode") == "training");
  CHECK(lines[0].at("options").at("memory") == 100000000);
  CHECK(lines.back().at("status") == "unsat");
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_TraceBadInputExitsTwoWithOneLine") {
  const auto dir = scratch_dir("trace_bad");
  const auto trace = (dir / "run.jsonl").string();
  REQUIRE(run_command(kSynth + " mlp --cost-model slapo --quiet --trace " + trace).exit_code == 0);
  struct Case {
    std::string args;     // after `synth trace`
    std::string message;  // the expected stderr line
  };
  const std::vector<Case> cases = {
      {trace + " --iter 2", "synth: error: --iter 2: the trace has steps 0 to 1\n"},
      {trace + " --iter two", "synth: error: --iter 'two' is not a step number\n"},
      {trace + " --iter", "synth: error: --iter needs a step number\n"},
      {trace + " --bogus", "synth: error: trace: unknown option '--bogus' (known: --iter N)\n"},
      {"", "synth: error: trace needs a trace file (synth --trace FILE.jsonl writes one)\n"},
      {(dir / "none.jsonl").string(), "synth: error: cannot read '" + (dir / "none.jsonl").string() + "': No such file or directory\n"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto r = run_command(kSynth + " trace " + c.args);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.find(c.message.substr(0, c.message.size() - 1)) == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_TraceIsNotWrittenWhenTheRunFails") {
  const auto dir = scratch_dir("trace_fail");
  const auto trace = (dir / "run.jsonl").string();
  const auto r = run_command(kSynth + " mlp --memory 1000 --trace " + trace);
  CHECK(r.exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(trace));
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_DotWritesThePlanGraph") {
  const auto dir = scratch_dir("dot");
  const auto dot = (dir / "plan.dot").string();
  const auto r = run_command(kSynth + " mlp --cost-model slapo --mesh 8 --quiet --dot " + dot);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dot) == golden("mlp_plan.dot"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_SvgRendersGraphCostPlotAndMemoryPlot") {
  REQUIRE_MESSAGE(run_command("command -v dot").exit_code == 0, "Graphviz's dot is missing: run scripts/bootstrap");
  const auto dir = scratch_dir("svg");
  const auto svg = (dir / "plan.svg").string();
  const auto r = run_command(kSynth + kLongRun + " --quiet --svg " + svg);
  REQUIRE(r.exit_code == 0);
  const auto graph = slurp(svg);
  CHECK(graph.find("<svg") != std::string::npos);
  CHECK(graph.find(">fc1</text>") != std::string::npos);
  const auto plot = slurp((dir / "plan.cost.svg").string());
  CHECK(plot.find("<title>step 2: cost 839117</title>") != std::string::npos);
  CHECK(plot.find("class=\"unsat\"") != std::string::npos);
  const auto memory = slurp((dir / "plan.memory.svg").string());
  CHECK(memory.find("<svg") != std::string::npos);
  CHECK(memory.find(">budget 0.10 GB</text>") != std::string::npos);  // --memory 100000000
  CHECK(memory.find("<title>peak at step ") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_SvgWithoutDotExitsTwoAndWritesNothing") {
  const auto dir = scratch_dir("svg_no_dot");
  const auto svg = (dir / "plan.svg").string(), trace = (dir / "run.jsonl").string();
  const auto r = run_command("env PATH=" + dir.string() + " " + kSynth + " mlp --svg " + svg + " --trace " + trace);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "synth: error: --svg needs Graphviz's dot on PATH (install the graphviz package, or write --dot FILE instead)\n");
  CHECK_FALSE(std::filesystem::exists(svg));
  CHECK_FALSE(std::filesystem::exists(trace));
  std::filesystem::remove_all(dir);
}

TEST_CASE("synth_ProgressShowsOnATerminalOnly") {
  // Not a terminal: stderr holds log lines, no carriage returns.
  const auto piped = run_command(kSynth + kLongRun);
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.err.find('\r') == std::string::npos);
  // A terminal (script(1) gives the command a pseudo-terminal); stdout goes to /dev/null, so what
  // the terminal shows is stderr: the progress line, redrawn in place, then the log lines.
  const auto tty = run_command("script -qec '" + kSynth + kLongRun + " >/dev/null' /dev/null");
  REQUIRE(tty.exit_code == 0);
  CHECK(tty.out.find("\r\x1b[Ksynth: step 0, best 3575645, bound -") != std::string::npos);
  CHECK(tty.out.find("\r\x1b[Ksynth: step 3, best 839117, bound 419559 (unsat)") != std::string::npos);
  CHECK(tty.out.find("proven optimal") != std::string::npos);
  // --quiet keeps the terminal clean too.
  const auto quiet = run_command("script -qec '" + kSynth + kLongRun + " --quiet >/dev/null' /dev/null");
  CHECK(quiet.out.find("synth: step") == std::string::npos);
}
