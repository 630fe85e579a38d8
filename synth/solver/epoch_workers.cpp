#include "synth/solver/epoch_workers.hpp"

#include <algorithm>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace shardsynth::synth {

EpochRecord record_of(const LagrangianSearch& search) {
  EpochRecord record;
  record.own_best = search.own_best();
  record.lower_bound = search.lower_bound();
  record.rounds = search.rounds();
  record.proven = search.proven();
  record.finished = search.finished();
  return record;
}

EpochWorkers::EpochWorkers(std::vector<std::unique_ptr<LagrangianSearch>> searches, long epoch_rounds, long max_rounds,
                           int lead)
    : epoch_rounds_(std::max(1L, epoch_rounds)),
      max_rounds_(max_rounds),
      lead_(static_cast<std::size_t>(std::max(1, lead))),
      slots_(searches.size()) {
  for (std::size_t k = 0; k < searches.size(); ++k) slots_[k].search = std::move(searches[k]);
  for (std::size_t k = 0; k < slots_.size(); ++k) threads_.emplace_back([this, k] { work(static_cast<int>(k)); });
}

EpochWorkers::~EpochWorkers() { stop(); }

long EpochWorkers::rounds_of(long epoch) const {
  if (max_rounds_ <= 0) return epoch_rounds_;
  return std::clamp(max_rounds_ - epoch * epoch_rounds_, 0L, epoch_rounds_);
}

bool EpochWorkers::may_run(const Slot& slot) const {
  if (stopping_ || slot.fresh) return true;
  return slot.ahead.size() < lead_ && rounds_of(slot.epoch) > 0;
}

void EpochWorkers::work(int k) {
  Slot& slot = slots_[k];
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return may_run(slot); });
    if (stopping_) return;
    std::unique_ptr<LagrangianSearch> old;
    if (slot.fresh) {
      old = std::move(slot.search);
      slot.search = std::move(slot.fresh);
      slot.epoch = slot.fresh_epoch;
      if (rounds_of(slot.epoch) <= 0) continue;
    }
    LagrangianSearch& search = *slot.search;
    const long epoch = slot.epoch;
    const long generation = slot.generation;
    lock.unlock();
    if (old) {
      old.reset();
#if defined(__GLIBC__)
      // The old search's memory sits free in this thread's arena; hand it
      // back to the system (S's peak RSS, anytime.cpp's restarts).
      malloc_trim(0);
#endif
    }
    std::vector<KernelPlan> found = search.run(rounds_of(epoch));
    EpochRecord record = record_of(search);
    record.found = std::move(found);
    lock.lock();
    if (slot.generation != generation) continue;  // replaced meanwhile: the epoch is dropped
    slot.ahead.push_back(std::move(record));
    ++slot.epoch;
    epoch_done_.notify_all();
  }
}

std::vector<EpochRecord> EpochWorkers::take() {
  std::unique_lock<std::mutex> lock(mutex_);
  epoch_done_.wait(lock, [&] {
    return std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.ahead.empty(); });
  });
  std::vector<EpochRecord> records;
  for (Slot& s : slots_) {
    records.push_back(std::move(s.ahead.front()));
    s.ahead.pop_front();
  }
  ++taken_;
  work_ready_.notify_all();
  return records;
}

void EpochWorkers::replace(int k, std::unique_ptr<LagrangianSearch> fresh) {
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& slot = slots_[k];
  slot.fresh = std::move(fresh);
  slot.fresh_epoch = taken_;
  ++slot.generation;
  slot.ahead.clear();
  work_ready_.notify_all();
}

std::vector<std::deque<EpochRecord>> EpochWorkers::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return {};
    stopping_ = true;
    work_ready_.notify_all();
  }
  for (auto& t : threads_) t.join();
  std::vector<std::deque<EpochRecord>> left;
  for (Slot& s : slots_) left.push_back(std::move(s.ahead));
  return left;
}

}  // namespace shardsynth::synth
