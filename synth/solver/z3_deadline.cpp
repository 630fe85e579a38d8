#include "synth/solver/z3_deadline.hpp"

namespace shardsynth::synth {

Z3Deadline::Z3Deadline(z3::context& ctx, std::optional<Clock::time_point> deadline) : ctx_(ctx) {
  if (!deadline) return;
  watcher_ = std::thread([this, at = *deadline] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_until(lock, at, [this] { return done_; })) return;
    fired_ = true;
    // Repeated until the check returns: an interrupt that lands before the
    // check has started could otherwise be lost.
    do {
      ctx_.interrupt();
    } while (!wake_.wait_for(lock, std::chrono::milliseconds(50), [this] { return done_; }));
  });
}

Z3Deadline::~Z3Deadline() {
  if (!watcher_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  watcher_.join();
}

bool Z3Deadline::fired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fired_;
}

}  // namespace shardsynth::synth
