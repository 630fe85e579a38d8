#pragma once
// Closing the gap with the Pareto elimination (pareto_elimination.hpp): the
// optimum of a kernel below an incumbent, or a proof that there is none,
// tracking only the memory rows that matter. It starts with the row the
// LP prices highest, with the LP re-solved over the tracked rows alone;
// when the cheapest plan it finds breaks another row, the row it exceeds
// most is added and it runs again (when it breaks only a tracked row, by
// what the rounding of usages dropped, the rounding is made finer). A plan
// that keeps every row is the optimum (the cheapest over a relaxation).
// The cutoff climbs from just above the LP bound towards the incumbent, as
// far each time as the labels' growth and the time left allow
// (cutoff_schedule.hpp): each cutoff with no plan below it is a proven
// lower bound, and no plan below the incumbent proves the incumbent optimal.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "synth/solver/cutoff_schedule.hpp"
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// One cutoff the search tried.
struct EliminationProbe {
  int64_t cutoff = 0;    // asked for a plan costing less than this (kernel cost)
  std::string outcome;   // "found" (the optimum, within the limit), "none" (no plan below), or why it gave up
  double ms = 0;         // wall time, milliseconds
};

struct EliminationSearch {
  std::string outcome = "not run";  // "optimal" (nothing cheaper than `cost`, or than the incumbent when `plan` is empty), or why it stopped: "time limit", "label limit", "too wide", "row limit"
  Assignment plan;                  // a plan of the kernel cheaper than the incumbent, within the limit (empty when none was found)
  int64_t cost = kForbidden;        // its kernel cost
  int64_t bound = 0;                // no plan of the kernel within the limit costs less (0: nothing proven)
  std::vector<EliminationProbe> probes;  // the cutoffs tried, in order
  std::vector<CutoffCost> climbed;  // the cutoffs with nothing below, with their labels (also an earlier search's), oldest first
  int rows = 0;                     // memory rows tracked in the last run
  std::vector<std::vector<int>> tracked;  // those rows (node sets), for a later search to start from
  int64_t granularity = 1;          // the usage rounding it ended with, bytes
  std::shared_ptr<const LpRelaxation> lp;  // the last LP it solved over some of the rows (null: none), for a later search
  std::vector<std::vector<int>> lp_rows;   // the rows that LP was solved with
  int runs = 0;                     // eliminations run
  int64_t labels = 0;               // labels kept, summed over the runs
  int width = 0;                    // largest factor scope, in nodes
  double ms = 0;                    // wall time, milliseconds

  bool proven() const { return outcome == "optimal"; }
};

// Runs on `kernel` (the problem `lp` was solved on) below `incumbent` (a kernel cost).
// `before`: an earlier search on the same kernel that gave up; this one
// starts from its rows, rounding and proven bound.
EliminationSearch close_by_elimination(const Problem& kernel, const LpRelaxation& lp, int64_t incumbent,
                                       std::optional<std::chrono::steady_clock::time_point> deadline,
                                       const EliminationSearch* before = nullptr);

}  // namespace shardsynth::synth
