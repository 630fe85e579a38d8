// The bisection schedule of the exact loop (exact_search.hpp), against a
// tight lower bound: probes just above the bound, on the kernel pruned at
// the probe, with a fresh solver each time. An unsat raises the proven
// bound to the probe and doubles the step to the next one; a sat is a
// better incumbent and halves the step. Probes near the bound prune nearly
// everything, so each check is small. A probe that outgrows Z3's resource
// budget hands over to the branching (exact_branching.cpp).
#include <algorithm>
#include <chrono>
#include <string>

#include "synth/solver/exact_search.hpp"
#include "synth/solver/z3_deadline.hpp"

namespace shardsynth::synth {

void ExactSearch::probe_pruned() {
  if (at_iteration_limit()) return stop("iteration limit");
  if (out_of_time()) return stop("time limit");
  if (step_ <= 0) step_ = 1;
  Iteration it;
  it.bound = std::min(*best_, result_.lower_bound + step_);
  std::optional<Narrowed> at_best = narrowed_at_best(it);
  const Narrowed narrowed = at_best ? std::move(*at_best) : narrow_at(it.bound);
  result_.pruned = narrowed.empty ? ProblemSize{} : size_of(narrowed.problem);
  const uint64_t rlimit = probe_rlimit();
  Z3Check check(narrowed, options_.encoding, check_timeout(), rlimit);
  check.solver.add(check.encoding.below(*it.bound - narrowed.constant));
  const auto start = Clock::now();
  it.prepare_ms = prepared_by(start);
  z3::check_result answer = z3::unknown;
  {
    const Z3Deadline watch(check.ctx, deadline_);
    answer = check.solver.check();
  }
  it.solver_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (answer == z3::sat) {
    it.status = CheckStatus::sat;
    score(narrowed, check.encoding, check.solver.get_model(), it);
    improve(it);
    step_ /= 2;  // the optimum is likely near the new incumbent: keep probing at half the distance
  } else if (answer == z3::unsat) {
    it.status = CheckStatus::unsat;
    raise_lower_bound(*it.bound);
    if (it.bound == best_) {
      result_.proven_optimal = true;
      stop("unsat");
    }
    step_ *= 2;
  } else if (rlimit > 0 && !out_of_time()) {
    report(std::move(it));  // unknown: the probe spent its budget
    branch();               // the LP branch and bound takes over (exact_branching.cpp)
    return;
  } else {
    stop_on_unknown(check.solver.reason_unknown());
  }
  report(std::move(it));
}

// A new incumbent within twice the lower bound: when narrowing at it leaves
// nothing, the proof is one check away, so the probe asks that (its bound
// becomes the best cost) instead of climbing towards it from the bound.
std::optional<Narrowed> ExactSearch::narrowed_at_best(Iteration& it) {
  if (it.bound == best_ || tried_best_ == best_ || *best_ - result_.lower_bound > result_.lower_bound) {
    return std::nullopt;
  }
  tried_best_ = best_;
  Narrowed n = narrow_at(best_);
  if (!n.empty) return std::nullopt;
  it.bound = best_;
  return n;
}

}  // namespace shardsynth::synth
