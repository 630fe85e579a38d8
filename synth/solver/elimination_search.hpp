#pragma once
// Closing the gap with the Pareto elimination (pareto_elimination.hpp): the
// optimum of a kernel below an incumbent, or a proof that there is none,
// tracking only the memory rows that matter. It starts with the rows the
// LP's duals lean on; when the cheapest plan it finds breaks another row,
// that row is added and it runs again. A plan that keeps every row is the
// optimum (it is the cheapest over a relaxation); no plan below the
// incumbent means the incumbent is the optimum.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct EliminationSearch {
  std::string outcome = "not run";  // "optimal" (nothing cheaper than `cost`, or than the incumbent when `plan` is empty), or why it stopped: "time limit", "label limit", "too wide", "row limit"
  Assignment plan;                  // a plan of the kernel cheaper than the incumbent, within the limit (empty when none was found)
  int64_t cost = kForbidden;        // its kernel cost
  int rows = 0;                     // memory rows tracked in the last run
  int runs = 0;                     // eliminations run
  int64_t labels = 0;               // labels kept, summed over the runs
  int width = 0;                    // largest factor scope, in nodes
  double ms = 0;                    // wall time, milliseconds

  bool proven() const { return outcome == "optimal"; }
};

// Runs on `kernel` (the problem `lp` was solved on) below `incumbent` (a kernel cost).
EliminationSearch close_by_elimination(const Problem& kernel, const LpRelaxation& lp, int64_t incumbent,
                                       std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace shardsynth::synth
