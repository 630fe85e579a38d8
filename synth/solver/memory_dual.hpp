#pragma once
// A lower bound under a binding usage limit: the Lagrangian dual of the
// usage rows (one multiplier per time slot of a folded problem), maximized
// by subgradient steps. Each evaluation prices every strategy's usage into
// its cost and runs a few warm TRW-S sweeps (dual_bound.hpp) on the priced
// kernel: the moved-out constant, minus the limit's price, is a lower bound
// on every kernel assignment within the limit, whatever the multipliers.
// The assignment decoded from the sweeps gives the subgradient (its usage
// minus the limit per slot).
//
// It needs no plan: its step aims a relative margin above its best bound
// (the margin halves when the bound stalls), along the subgradient
// deflected by the last direction, so its bounds depend only on the problem
// and how many steps it ran. Every few steps it also probes for plans: it
// decodes at multipliers scaled up until the decoded assignment keeps the
// limit, and relinks (path_relink.hpp) the newest decoded assignments that
// break the limit with those that keep it. The anytime search (anytime.hpp)
// runs it on a thread of its own beside the searches and hands its plans to
// them to polish.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "synth/solver/folding.hpp"

namespace shardsynth::synth {

struct MemoryDualOptions {
  std::optional<std::chrono::steady_clock::time_point> deadline;  // no step starts after this time
  int sweeps_per_step = 2;       // warm TRW-S sweeps per evaluation of the dual
  int settled_sweeps = 8;        // sweeps per evaluation once the margin is below settled_margin
  double settled_margin = 0.002; // the margin below which the multipliers count as settled
  double first_margin = 0.05;    // the step's first target: this fraction above the bound
  int patience = 6;              // steps without a better bound before the margin halves
  double least_margin = 1e-5;    // the margin starts again at first_margin below this fraction
  double deflection = 0.7;       // share of the last direction in the next one (0 = the plain subgradient)
  int relink_keep = 4;           // decoded assignments kept on each side of the limit for relinking
  int probe_every = 2;           // a primal probe after every this-many-th step (0 = none)
};

class MemoryDual {
 public:
  // Keeps a reference to `folded`, which must outlive this object.
  MemoryDual(const FoldedProblem& folded, const MemoryDualOptions& options);
  ~MemoryDual();
  MemoryDual(const MemoryDual&) = delete;
  MemoryDual& operator=(const MemoryDual&) = delete;

  // Runs steps until `stop` is set, the deadline passes, `steps` ran (0 = no
  // count), or the multipliers have nothing left to price (the limit does
  // not bind at the unpriced optimum's decoded assignment).
  void run(const std::atomic<bool>& stop, long steps = 0);

  int64_t lower_bound() const;  // kernel costs: no kernel assignment within the limit costs less (0 before any step)
  long steps() const;           // evaluations of the dual so far
  // A plan found elsewhere (a kernel assignment that keeps the limit): the
  // probes relink it with their decoded assignments too; call only between runs.
  void add_plan(const Assignment& kernel);
  // The last decoded assignment (minimal on the priced costs as far as the
  // sweeps found; it need not keep the limit); call only between runs.
  const Assignment& decoded() const;
  // The newest plan of the probes (decoded or relinked) that keeps the
  // limit, taken (empty when none came since the last take); call only
  // between runs.
  Assignment take_feasible();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardsynth::synth
