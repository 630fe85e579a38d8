#pragma once
// Errors caused by what the user handed in: a malformed graph, an unknown op,
// a shape that does not divide, a bad mesh or flag. Commands map them to exit
// code 2 and print the message as one line.
#include <stdexcept>
#include <string>

namespace shardsynth::ir {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace shardsynth::ir
