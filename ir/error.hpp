#pragma once
// ir::InputError, the error for what the user handed in, is the one in
// common/error.hpp: the solver of plain problems (synth/solver/) throws it
// without knowing ir, and ir's users catch it under this name.
#include "common/error.hpp"

namespace shardsynth::ir {

using common::InputError;

}  // namespace shardsynth::ir
