#pragma once
// The Z3 side of one narrowed problem (narrowing.hpp): a context, its
// encoding, and a solver holding its constraints (and `false` when nothing
// survived narrowing). SIGINT interrupts its checks (interrupt.hpp).
#include <z3++.h>

#include "synth/solver/interrupt.hpp"
#include "synth/solver/narrowing.hpp"
#include "synth/solver/solver_types.hpp"
#include "synth/solver/z3_encoding.hpp"

namespace shardsynth::synth {

struct Z3Check {
  z3::context ctx;            // owns every expression below
  InterruptGuard guard{ctx};  // SIGINT interrupts the check
  Z3Encoding encoding;        // the narrowed problem's encoding
  z3::solver solver;          // holds the encoding's constraints

  // `timeout_ms` = 0: no per-check timeout.
  Z3Check(const Narrowed& narrowed, EncodingKind kind, unsigned timeout_ms);
};

}  // namespace shardsynth::synth
