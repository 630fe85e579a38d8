#pragma once
// The Z3 side of one narrowed problem (narrowing.hpp): a context, its
// encoding, and a solver holding its constraints (and `false` when nothing
// survived narrowing). SIGINT interrupts its checks (interrupt.hpp).
#include <cstdint>

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

  // `timeout_ms` = 0: no per-check timeout; `rlimit` = 0: no resource
  // budget (Z3's deterministic count of its work; the check answers
  // unknown when it is spent).
  Z3Check(const Narrowed& narrowed, EncodingKind kind, unsigned timeout_ms, uint64_t rlimit = 0);
};

}  // namespace shardsynth::synth
