#pragma once
// Errors caused by what the user handed in: a malformed graph, an unknown op,
// a shape that does not divide, a bad mesh or flag, a malformed IOPDDL file.
// Commands map them to exit code 2 and print the message as one line. Shared
// by every module: ir re-exports it as ir::InputError (ir/error.hpp), and the
// solver of plain problems (synth/solver/), which knows nothing of ir, throws
// it too.
#include <stdexcept>
#include <string>

namespace shardsynth::common {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace shardsynth::common
