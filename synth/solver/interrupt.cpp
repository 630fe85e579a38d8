#include "synth/solver/interrupt.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <limits>
#include <mutex>
#include <set>
#include <string>

#include <pthread.h>
#include <unistd.h>

#include <z3++.h>

namespace shardsynth::synth {
namespace {

std::atomic<bool> g_requested{false};
std::mutex g_mutex;                     // guards g_contexts
std::set<z3::context*> g_contexts;      // the live registered contexts
int g_pipe[2] = {-1, -1};               // SIGINT handler -> watcher thread
std::atomic<int> g_signals{0};          // SIGINTs received (lock-free: safe in a handler)

// The watcher: waits for the handler's byte, then interrupts Z3 (which a
// signal handler may not call).
extern "C" void* watch_sigint(void*) {
  char byte = 0;
  while (read(g_pipe[0], &byte, 1) != 1) {
  }
  request_interrupt();
  return nullptr;
}

extern "C" void on_sigint(int) {
  if (g_signals.fetch_add(1) > 0) _exit(130);  // the second Ctrl-C: stop now
  const char byte = 1;
  [[maybe_unused]] const auto written = write(g_pipe[1], &byte, 1);
}

}  // namespace

void request_interrupt() {
  g_requested = true;
  std::lock_guard lock(g_mutex);
  for (z3::context* ctx : g_contexts) ctx->interrupt();
}

bool interrupt_requested() { return g_requested; }

void reset_interrupt() { g_requested = false; }

InterruptGuard::InterruptGuard(z3::context& ctx) : ctx_(ctx) {
  std::lock_guard lock(g_mutex);
  g_contexts.insert(&ctx_);
  if (g_requested) ctx_.interrupt();
}

InterruptGuard::~InterruptGuard() {
  std::lock_guard lock(g_mutex);
  g_contexts.erase(&ctx_);
}

void install_sigint_handler() {
  if (g_pipe[0] >= 0) return;
  if (pipe(g_pipe) != 0) return;  // no pipe: Ctrl-C keeps its default (the process ends)
  // A plain detached pthread, not std::thread: std::thread hands its state to
  // the new thread on the heap, and a run that ends at once (bad input) can
  // exit before the thread has taken it, which LeakSanitizer reports.
  pthread_t watcher{};
  if (pthread_create(&watcher, nullptr, watch_sigint, nullptr) != 0) return;  // no watcher: the default stays
  pthread_detach(watcher);
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
}

void set_memory_limit_mb(int64_t megabytes) {
  const uint64_t bytes = static_cast<uint64_t>(megabytes) << 20;
  const uint64_t watermark = std::min<uint64_t>(bytes, std::numeric_limits<unsigned>::max());
  z3::set_param("memory_high_watermark", std::to_string(watermark).c_str());
}

}  // namespace shardsynth::synth
