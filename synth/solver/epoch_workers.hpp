#pragma once
// Searches that run ahead of the exchange between epochs. In lock-step
// epochs (anytime.hpp) every thread waits at the end of each epoch for the
// slowest search; one slow round (a Z3 region of a second or two, where
// the others' rounds take 50 ms) leaves the other threads idle. On the
// contest's M a third of the threads' time went that way (BENCHMARKS.md,
// "Issue 32: searches that run ahead").
//
// Here each search has a thread of its own and runs its epochs one after
// the other, up to `lead` epochs past the last epoch the caller has taken.
// The caller takes the epochs in order, every search's record of one epoch
// at a time, and may replace a search from the next epoch on; what the
// replaced search ran past that epoch is dropped. Nothing else passes into
// a search, so each record is what the lock-step epochs give, and so are
// the plans reported from them: the run stays deterministic.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "synth/solver/lagrangian_search.hpp"

namespace shardsynth::synth {

// What one search left after one epoch.
struct EpochRecord {
  std::vector<KernelPlan> found;  // the plans of the epoch that beat the search's own cost to beat, in order
  int64_t own_best = kForbidden;  // the kernel cost of its incumbent after the epoch (kForbidden = none yet)
  int64_t lower_bound = 0;        // its lower bound after the epoch, in kernel costs
  long rounds = 0;                // rounds it has run, after the epoch
  bool proven = false;            // Z3 proved its incumbent optimal
  bool finished = false;          // it has nothing left to do
};

// A search's state after an epoch, without the epoch's plans (`found` empty).
EpochRecord record_of(const LagrangianSearch& search);

class EpochWorkers {
 public:
  // Starts one thread per search. An epoch is `epoch_rounds` rounds; with
  // `max_rounds` (0 = none) the last one is cut to end there, and none
  // runs past it.
  EpochWorkers(std::vector<std::unique_ptr<LagrangianSearch>> searches, long epoch_rounds, long max_rounds, int lead);
  ~EpochWorkers();  // stops the threads (stop())
  EpochWorkers(const EpochWorkers&) = delete;
  EpochWorkers& operator=(const EpochWorkers&) = delete;

  // Waits for every search's record of the next epoch and returns them,
  // one per search in order.
  std::vector<EpochRecord> take();
  // Search k is `fresh` from the epoch after the last one taken on.
  void replace(int k, std::unique_ptr<LagrangianSearch> fresh);
  // Stops the threads once their current epoch ends; returns, per search,
  // the records of the epochs run past the last one taken.
  std::vector<std::deque<EpochRecord>> stop();

 private:
  // One search and what it has run ahead.
  struct Slot {
    std::unique_ptr<LagrangianSearch> search;  // the search the thread runs
    std::unique_ptr<LagrangianSearch> fresh;   // its replacement, taken up at the thread's next epoch (null = none)
    long fresh_epoch = 0;                      // the epoch the replacement starts at
    long epoch = 0;                            // the epoch the thread runs next (0-based, over all searches)
    long generation = 0;                       // replacements so far: a record of an older one is dropped
    std::deque<EpochRecord> ahead;             // records of epochs past the last one taken, oldest first
  };

  long rounds_of(long epoch) const;
  bool may_run(const Slot& slot) const;
  void work(int k);

  long epoch_rounds_;        // rounds per epoch
  long max_rounds_;          // no round past this many per search (0 = no limit)
  std::size_t lead_;         // epochs a search may run past the last one taken
  long taken_ = 0;           // epochs taken so far
  bool stopping_ = false;    // the threads end after their current epoch
  std::vector<Slot> slots_;  // per search
  std::mutex mutex_;
  std::condition_variable work_ready_;  // a thread may run (room ahead, a replacement, or stop)
  std::condition_variable epoch_done_;  // a record was added
  std::vector<std::thread> threads_;    // per search
};

}  // namespace shardsynth::synth
