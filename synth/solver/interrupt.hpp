#pragma once
// Ending a search early on request: SIGINT (Ctrl-C) and Z3's memory limit.
//
// Every Z3 context the search creates is registered while it lives
// (InterruptGuard); request_interrupt() interrupts all of them, and any
// context created afterwards is interrupted at once, so the running check
// answers `unknown` and the loop ends with the best plan so far, labelled
// not proven. The SIGINT handler only writes to a pipe (async-signal-safe); a
// watcher thread does the interrupting, since Z3_interrupt is not
// async-signal-safe. Solvers must be given the parameter ctrl_c=false:
// otherwise Z3 installs its own SIGINT handler around each check, which
// cancels the check and swallows the signal.
#include <cstdint>

namespace z3 {
class context;
}

namespace shardsynth::synth {

// Interrupts every registered Z3 context and every one registered later.
void request_interrupt();
// Whether request_interrupt() was called (by the SIGINT watcher or directly).
bool interrupt_requested();
// Withdraws the request (for tests that interrupt more than once).
void reset_interrupt();

// Registers `ctx` for the guard's lifetime; interrupts it at once when an
// interrupt is already requested.
class InterruptGuard {
 public:
  explicit InterruptGuard(z3::context& ctx);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  z3::context& ctx_;  // the registered context
};

// Installs the SIGINT handler: the first SIGINT requests an interrupt; a
// second one ends the process at once with exit code 130.
void install_sigint_handler();

// Z3's memory limit for every later context, in megabytes: the global
// parameter memory_high_watermark (bytes, capped at 4 GiB), past which a
// check answers unknown ("memout"). Not memory_max_size: past that hard limit
// Z3 throws from deep inside and, measured, can crash the process.
void set_memory_limit_mb(int64_t megabytes);

}  // namespace shardsynth::synth
