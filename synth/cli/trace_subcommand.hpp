#pragma once
// `synth trace FILE.jsonl [--iter N]`: re-prints a recorded step exactly as
// the live run printed it, or summarizes the whole run
// (synth/report/trace_replay.hpp).
#include <string>
#include <vector>

namespace shardsynth::synth {

// The subcommand on its arguments (those after "trace"): prints to stdout,
// and returns 0, or 2 after a one-line error on stderr.
int trace_command_main(const std::vector<std::string>& args);

}  // namespace shardsynth::synth
