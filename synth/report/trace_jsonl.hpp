#pragma once
// The search trace as JSON lines (docs/trace_jsonl.md): a header object
// (format "shardsynth.trace/1", the labels of the problem's decision nodes, the run's
// options), then one object per search step: the bound asked, the answer,
// the solver's milliseconds, and on sat the assignment with the per-row costs
// of the iteration table, so `synth trace` can re-print it byte for byte.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "synth/lowering.hpp"
#include "synth/report/iteration_table.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// The format tag of the header line.
inline constexpr const char* kTraceFormat = "shardsynth.trace/1";

// "sat", "unsat" or "unknown".
std::string status_name(CheckStatus status);

// The labels of the problem's decision nodes (the names model_text prints).
std::vector<std::string> problem_labels(const Lowered& lowered);

// The header line: format, unit-free problem labels and the caller's options object.
nlohmann::json trace_header(const Lowered& lowered, const nlohmann::json& options);

// One step: step, source, relaxed, bound (null when unbounded), status,
// solver_ms; on sat also cost, assignment, rows (name, in_spec, out_spec,
// cost) and total, the table's Total line.
nlohmann::json iteration_to_json(const Lowered& lowered, const Iteration& iteration);

// Collects the trace of one run and writes it when the run is over, through
// ir::write_file_atomic (a temporary file renamed over the path), so a run
// that fails leaves no partial trace.
class JsonlTraceWriter {
 public:
  JsonlTraceWriter(std::string path, nlohmann::json options);
  // Records a step; the first call also records the header with the lowered problem's labels.
  void add(const Lowered& lowered, const Iteration& iteration);
  // Writes the file (header and steps, one object per line).
  void finish() const;

 private:
  std::string path_;          // where the trace goes
  nlohmann::json options_;    // the run's options, for the header
  std::string text_;          // the lines so far
};

// A trace read back.
struct TraceFile {
  nlohmann::json header;             // the header object
  std::vector<std::string> labels;   // header.labels: the problem's node labels
  std::vector<nlohmann::json> steps; // the step objects, in order
};

// Reads and checks a trace. Throws ir::InputError naming the file (and line)
// when it is not one.
TraceFile read_trace(const std::string& path);

// A recorded sat step's table, from its rows and total (format_iteration_rows).
std::string table_from_json(const nlohmann::json& step);

}  // namespace shardsynth::synth
