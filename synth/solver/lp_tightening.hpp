#pragma once
// One LP step of the exact loop, on the kernel Z3 will see: the LP
// relaxation's bound (lp_relaxation.hpp), a plan rounded from it
// (lp_rounding.hpp), and reduced-cost fixing (reduced_cost_fixing.hpp) at
// the cheaper of the incumbent and that plan. The kernel is changed in
// place: what is fixed becomes forbidden, which keeps every assignment
// cheaper than that cost, so Z3's unsat below the incumbent on what is left
// still proves it optimal. The LP's solution is kept: a probe "anything
// cheaper than b?" may fix at b again (the kernel's shape does not change).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/problem.hpp"
#include "synth/solver/reduced_cost_fixing.hpp"

namespace shardsynth::synth {

struct LpTightening {
  std::string outcome;              // the LP's outcome (LpRelaxation::outcome)
  int64_t bound = 0;                // no assignment of the kernel as handed in costs less (0 when the LP gave none)
  Assignment plan;                  // a plan of the kernel rounded from the LP, within the limit (empty when none)
  int64_t plan_cost = kForbidden;   // its cost in the kernel
  int64_t cutoff = kForbidden;      // the kernel cost fixing was done at (kForbidden when none was)
  FixingCount fixed;                // strategies and pairs forbidden
  int memory_rows = 0;              // memory rows the LP needed
  int64_t columns = 0;              // LP columns
  double ms = 0;                    // wall time, milliseconds
  std::shared_ptr<const LpRelaxation> relaxation;  // the LP's solution, for fixing again at other costs (fix_by_reduced_cost); null when it has no duals
};

// Runs the step on `kernel` with `incumbent` (a kernel cost; unset = none);
// the LP gets a quarter of the time left before `deadline`.
LpTightening tighten_with_lp(Problem& kernel, std::optional<int64_t> incumbent,
                             std::optional<std::chrono::steady_clock::time_point> deadline);

}  // namespace shardsynth::synth
