#pragma once
// Z3 failing in itself (not answering unknown: throwing). Z3 is the solver's
// private business, so its z3::exception is translated into this at the
// solver's boundary (run_cegis, conflicting_pins) and nothing above the
// solver sees a Z3 type.
#include <stdexcept>

namespace shardsynth::synth {

// Thrown when Z3 itself fails; the message is "z3: " and Z3's own.
class SolverError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace shardsynth::synth
