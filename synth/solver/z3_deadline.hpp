#pragma once
// Interrupts a Z3 context at a wall-clock deadline. Z3's own "timeout"
// parameter is not checked by every tactic (z3 4.8.12's pseudo-Boolean
// solving ran past it by minutes), so every check of the search runs under
// one of these when there is a time limit: a watcher thread calls
// Z3_interrupt at the deadline (and every 50 ms after it until the check
// returns), and the check returns unknown ("canceled").
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include <z3++.h>

namespace shardsynth::synth {

class Z3Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // Watches `ctx` until `deadline` (no thread when unset); `ctx` must outlive this object.
  Z3Deadline(z3::context& ctx, std::optional<Clock::time_point> deadline);
  // Stops watching: returns at once, and no interrupt is sent afterwards.
  ~Z3Deadline();
  Z3Deadline(const Z3Deadline&) = delete;
  Z3Deadline& operator=(const Z3Deadline&) = delete;

  // Whether the deadline passed and the context was interrupted.
  bool fired() const;

 private:
  z3::context& ctx_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;   // set by the destructor: stop watching
  bool fired_ = false;  // the interrupt was sent
  std::thread watcher_;
};

}  // namespace shardsynth::synth
