#pragma once
// The printed result of a staged plan: a per-stage table (compute,
// communication, memory, time, which stage is the bottleneck), the tensors
// sent between stages with their specs, each stage's nodes and directives,
// and the pipeline time for the micro-batch count.
#include <string>

#include "ir/staged_schedule.hpp"
#include "synth/stages/stages.hpp"

namespace shardsynth::synth {

// One row per stage: nodes, first and last node, parameters, compute,
// communication, memory, time (compute + communication) and a "<-" marking
// the bottleneck stage(s). `unit` is the cost model's unit.
std::string format_stage_table(const ir::StagedSchedule& schedule, const std::string& unit);
// One row per transfer: tensor, from and to stage, spec, bytes, cost.
std::string format_transfer_table(const ir::StagedSchedule& schedule, const std::string& unit);
// Both tables, the summary lines, then every stage's nodes and directives.
std::string stage_report(const StagePlan& plan, const std::string& unit);

}  // namespace shardsynth::synth
