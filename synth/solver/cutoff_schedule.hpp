#pragma once
// Where the Pareto elimination's next cutoff lies (elimination_search.hpp).
// Each cutoff with no plan below it is a proven bound, and the labels an
// elimination keeps grow about exponentially with the cutoff's height above
// the LP's bound. So once two cutoffs tracking the same rows are done, their
// label counts give that growth rate, and the next cutoff is the one whose
// elimination should keep about twice the labels of the last one: far when
// labels grow slowly, near when they grow fast. With a deadline, that factor
// shrinks to what the time left allows (time taken as growing with the
// square of the labels kept), and when not even a small step fits, the schedule stops, so
// that the phases after it get the time instead of a run that cannot end.
// Before a growth rate is known the cutoffs climb by fractions of the gap,
// each 1.5 times as far above the base as the last (1/16 first).
// Without a deadline every choice depends on label counts alone
// (deterministic).
#include <cstdint>
#include <optional>
#include <vector>

namespace shardsynth::synth {

// A cutoff below which an elimination found no plan.
struct CutoffCost {
  int64_t cutoff = 0;  // the cutoff, a kernel cost
  int64_t labels = 0;  // labels its last elimination kept
  int rows = 0;        // memory rows that elimination tracked
  double ms = 0;       // that elimination's wall time, milliseconds
};

class CutoffSchedule {
 public:
  // `base`: a proven bound (or the LP's); `incumbent`: the cost to prove or
  // beat, the last cutoff; `done`: cutoffs already climbed, oldest first.
  CutoffSchedule(int64_t base, int64_t incumbent, std::vector<CutoffCost> done = {});

  // Records a cutoff with nothing below it.
  void climbed(const CutoffCost& done);

  // The next cutoff (at most the incumbent), or none when the step that
  // fits in `ms_left` (unset: no deadline) would be too small to be worth
  // it, or no time is left.
  std::optional<int64_t> next(std::optional<double> ms_left) const;

  const std::vector<CutoffCost>& done() const { return done_; }

 private:
  std::optional<double> growth_rate() const;

  int64_t base_;                 // the proven bound the climb starts from
  int64_t incumbent_;            // the last cutoff
  double fraction_ = 1.0 / 16;   // the fraction of the gap the next cutoff lies above base_ without a rate
  std::vector<CutoffCost> done_;  // cutoffs climbed, oldest first (also those of an earlier search)
};

}  // namespace shardsynth::synth
