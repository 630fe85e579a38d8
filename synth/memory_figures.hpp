#pragma once
// A plan's predicted memory per device, by what it holds: parameters,
// gradients, optimizer state, the activations live at the peak and
// transient buffers, with the peak's time step and what runs then
// (`synth --memory-report`, and the schedule's "memory" figures).
#include <string>

#include "ir/schedule.hpp"
#include "synth/lowering.hpp"

namespace shardsynth::synth {

// The figures of `assignment` (ir::ScheduleMemory): the peak is
// peak_usage's; parameters, gradients and state are what the parameters'
// nodes hold at every step; transient, the gathered parameter copies live at
// the peak step (synth/followers.hpp); activations are the rest of the peak.
ir::ScheduleMemory memory_figures(const Lowered& lowered, const Assignment& assignment);

// "forward of NODE", "backward of NODE" or "optimizer" for a time step of
// lowering's order (synth/liveness.hpp).
std::string step_name(const Lowered& lowered, int64_t step);

}  // namespace shardsynth::synth
