#include "synth/solver/cutoff_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace shardsynth::synth {
namespace {

constexpr double kGrowth = 2.0;       // labels of the next elimination over the last one's, at most
constexpr double kTimeShare = 0.8;    // of the time left, what the next elimination is planned to take
constexpr double kLeastGrowth = 1.05;  // a smaller step than this growth is not tried (the time goes on)

}  // namespace

CutoffSchedule::CutoffSchedule(int64_t base, int64_t incumbent, std::vector<CutoffCost> done)
    : base_(base), incumbent_(incumbent), done_(std::move(done)) {}

void CutoffSchedule::climbed(const CutoffCost& done) {
  done_.push_back(done);
  fraction_ *= 1.5;
}

// Labels' growth per unit of cost, from the latest two cutoffs that tracked
// the same rows and kept more labels at the higher one.
std::optional<double> CutoffSchedule::growth_rate() const {
  for (size_t b = done_.size(); b-- > 1;) {
    const CutoffCost& high = done_[b];
    const CutoffCost& low = done_[b - 1];
    if (high.rows == low.rows && high.cutoff > low.cutoff && low.labels > 0 && high.labels > low.labels) {
      return std::log(static_cast<double>(high.labels) / static_cast<double>(low.labels)) /
             static_cast<double>(high.cutoff - low.cutoff);
    }
  }
  return std::nullopt;
}

std::optional<int64_t> CutoffSchedule::next(std::optional<double> ms_left) const {
  if (ms_left && *ms_left <= 0) return std::nullopt;  // past the deadline: nothing new is started
  const int64_t gap = incumbent_ - base_;
  const std::optional<double> rate = growth_rate();
  if (gap <= 16) return incumbent_;
  if (!rate || done_.empty() || done_.back().labels <= 0) {
    return fraction_ >= 1 ? incumbent_ : base_ + static_cast<int64_t>(static_cast<double>(gap) * fraction_);
  }
  const CutoffCost& last = done_.back();
  double growth = kGrowth;
  // An elimination's time grows about as the square of its labels (each
  // new label is checked against the others of its entry).
  if (ms_left && last.ms > 0) growth = std::min(growth, std::sqrt(std::max(0.0, kTimeShare * *ms_left / last.ms)));
  if (growth < kLeastGrowth) return std::nullopt;
  const double step = std::log(growth) / *rate;
  const int64_t from = std::max(base_, last.cutoff);
  if (step >= static_cast<double>(incumbent_ - from)) return incumbent_;
  return std::min(incumbent_, from + std::max<int64_t>(1, std::llround(step)));
}

}  // namespace shardsynth::synth
