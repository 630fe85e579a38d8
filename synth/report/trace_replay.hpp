#pragma once
// Replaying a recorded trace (trace_jsonl.hpp): a step exactly as the live
// run printed it, or the whole run as a table (step, source, bound, status,
// cost, milliseconds). `synth trace` (synth/cli/trace_subcommand.cpp) prints these.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "synth/report/trace_jsonl.hpp"

namespace shardsynth::synth {

// What the live run prints for one step (trace_jsonl.hpp's step object):
// the "Iter N" header, and on sat the model and the table as logged; on
// unsat "Cannot find better solutions" when the bound was the last sat cost
// `best_before`, else "No solution below B". Ends with a newline.
std::string iteration_block(const std::vector<std::string>& labels, const nlohmann::json& step,
                            std::optional<int64_t> best_before);

// iteration_block for step `index` of a trace, with best_before taken from
// the steps before it. Throws ir::InputError naming `index` when there is no such step.
std::string recorded_iteration(const TraceFile& trace, int64_t index);

// The run as a table (Step, Source, Bound, Status, Cost, ms) and a verdict line.
std::string trace_summary(const TraceFile& trace);

}  // namespace shardsynth::synth
