#include "synth/solver/z3_check.hpp"

#include <algorithm>
#include <cstdint>

namespace shardsynth::synth {

Z3Check::Z3Check(const Narrowed& narrowed, EncodingKind kind, unsigned timeout_ms, uint64_t rlimit)
    : encoding(ctx, narrowed.empty ? Problem{} : narrowed.problem, kind), solver(ctx) {
  z3::params params(ctx);
  params.set("random_seed", 0u);
  params.set("ctrl_c", false);  // SIGINT is ours (interrupt.hpp)
  if (timeout_ms > 0) params.set("timeout", timeout_ms);
  if (rlimit > 0) params.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(rlimit, UINT32_MAX)));
  solver.set(params);
  solver.add(encoding.constraints());
  if (narrowed.empty) solver.add(ctx.bool_val(false));
}

}  // namespace shardsynth::synth
