#pragma once
// Where a model search's steps go while it runs: the PR's iteration block
// on stdout, a debug line on stderr, the JSON-lines trace (--trace), and
// the progress line. A new sink: a class in synth/report/, and one member
// and one line in StepSinks::add (step_sinks.cpp).
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/logger.h>

#include "synth/lowering.hpp"
#include "synth/report/progress_line.hpp"
#include "synth/report/trace_jsonl.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth::cli {

class StepSinks {
 public:
  // `trace_path` empty: no trace; `trace_header` is the trace's options record.
  StepSinks(std::shared_ptr<spdlog::logger> out, std::shared_ptr<spdlog::logger> log, const std::string& trace_path,
            const nlohmann::json& trace_header, bool quiet);

  // One step of the search on `lowered`.
  void add(const Lowered& lowered, const Iteration& it);
  // After the last step: clears the progress line, closes the trace.
  void finish();

 private:
  std::shared_ptr<spdlog::logger> out_;    // the iteration blocks (stdout)
  std::shared_ptr<spdlog::logger> log_;    // diagnostics (stderr)
  std::optional<JsonlTraceWriter> trace_;  // --trace
  ProgressLine progress_;                  // the live progress line (stderr)
  std::optional<int64_t> best_seen_;       // the last sat step's cost, for an unsat block's wording
};

}  // namespace shardsynth::synth::cli
