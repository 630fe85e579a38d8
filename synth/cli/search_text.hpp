#pragma once
// How `synth` words a search's outcome: the verdict and gap, one line per
// step of a plain problem, the debug summary, and the exit code.
#include <string>

#include "synth/cli/flags.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth::cli {

// Sizes before and after the reductions, the bounds and the steps, for logs and bench/synth_bench.
std::string search_summary(const CegisResult& search);
// One line per search step, for plain problems that have no graph to print.
std::string step_line(const Iteration& it);
// Names why an unproven search stopped: "interrupted (SIGINT)" once Ctrl-C
// was pressed, "memory limit" for Z3's memory limit, else Z3's own reason.
void label_stop_reason(CegisResult& search);
// "lower bound L, gap G%" of an unproven search.
std::string gap_text(const CegisResult& search);
// The summary line: the cost, and either the proof or the labelled gap.
std::string verdict(const CegisResult& search);
// The end of a search run whose outputs are all written: its exit code
// (130 after Ctrl-C); under --time-limit the process leaves at once.
int finish_search_run(const Flags& flags);

}  // namespace shardsynth::synth::cli
