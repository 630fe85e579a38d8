#include "synth/solver/time_guard.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace shardsynth::synth {
namespace {

std::atomic<int> abandoned{0};

// What the worker and the caller share; it lives as long as either holds it.
struct Shared {
  std::mutex mutex;
  std::condition_variable ended_cv;
  bool ended = false;        // the search returned or threw
  bool abandoned = false;    // the caller gave up waiting: no more callbacks
  CegisResult result;        // the search's own result, once ended
  std::exception_ptr error;  // what it threw, if anything
  CegisResult snapshot;      // the best reported plan and the highest published bound
  Problem problem;           // the worker's own copy
  CegisOptions options;      // its own copy
  IterationCallback on_iteration;  // the caller's, called under `mutex` while not abandoned
};

}  // namespace

int abandoned_searches() { return abandoned.load(); }

CegisResult run_within_time_limit(const Problem& problem, const CegisOptions& options,
                                  const IterationCallback& on_iteration, const GuardedSearch& search) {
  using Clock = std::chrono::steady_clock;
  const auto give_up_at = *search_deadline(options, Clock::now()) + kAbandonGrace;
  auto shared = std::make_shared<Shared>();
  shared->problem = problem;
  shared->options = options;
  shared->on_iteration = on_iteration;
  shared->snapshot.original = size_of(problem);
  std::thread worker([shared, search] {
    // Steps and bounds go to the caller and into the snapshot, under the
    // lock, until the caller abandons the search.
    const IterationCallback forward = [&](const Iteration& it) {
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (shared->abandoned) return;
      CegisResult& s = shared->snapshot;
      s.iterations.push_back(it);
      if (it.status == CheckStatus::sat && !it.relaxed && (s.best.empty() || it.cost < s.best_cost)) {
        s.best = it.assignment;
        s.best_cost = it.cost;
      }
      if (shared->on_iteration) shared->on_iteration(it);
    };
    const BoundCallback publish = [&](int64_t bound) {
      std::lock_guard<std::mutex> lock(shared->mutex);
      shared->snapshot.lower_bound = std::max(shared->snapshot.lower_bound, bound);
    };
    CegisResult result;
    std::exception_ptr error;
    try {
      result = search(shared->problem, shared->options, forward, publish);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->result = std::move(result);
    shared->error = error;
    shared->ended = true;
    shared->ended_cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(shared->mutex);
  if (shared->ended_cv.wait_until(lock, give_up_at, [&] { return shared->ended; })) {
    lock.unlock();
    worker.join();
    if (shared->error) std::rethrow_exception(shared->error);
    return std::move(shared->result);
  }
  shared->abandoned = true;
  ++abandoned;
  worker.detach();
  CegisResult snapshot = std::move(shared->snapshot);
  snapshot.stop_reason = "time limit";
  if (!snapshot.best.empty()) snapshot.lower_bound = std::min(snapshot.lower_bound, snapshot.best_cost);
  return snapshot;
}

}  // namespace shardsynth::synth
