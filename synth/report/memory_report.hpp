#pragma once
// `synth --memory-report`: the plan's predicted memory per device as a table,
// one row per kind of buffer and the peak with the step at which it occurs.
#include <string>

#include "costs/op_cost.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"

namespace shardsynth::synth {

// The table for figures `m` of a plan on `mesh` in `mode`, newline-terminated.
// A non-empty `precision` (costs::policy_text) is printed as a line above the
// rows, and the optimizer state is noted as the master weights and moments.
std::string memory_report_text(const ir::ScheduleMemory& m, const ir::Mesh& mesh, costs::Mode mode,
                               const std::string& precision = "");

}  // namespace shardsynth::synth
