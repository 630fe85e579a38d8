#pragma once
// The runs `synth` can make, one per kind of input: a contest problem
// (run_iopddl.cpp) or a model (run_model.cpp: search, evaluate, stages,
// random plan). Each prints to stdout, writes the asked-for files only once
// it has succeeded, and returns the exit code; bad input throws
// ir::InputError (one line, exit 2, printed by synth_main.cpp).
#include <string>

#include "synth/cli/flags.hpp"

namespace shardsynth::synth::cli {

// `synth --iopddl FILE [--verify SOLUTION]`.
int run_iopddl(const Flags& flags);

// `synth MODEL ...` (or `synth evaluate MODEL ... --schedule FILE`), where
// `model_name` is the chosen model subcommand or "graph".
int run_model(const Flags& flags, const std::string& model_name);

}  // namespace shardsynth::synth::cli
