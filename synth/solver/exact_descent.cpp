// The descent schedule of the exact loop (exact_search.hpp): one solver on
// the kernel narrowed at the best cost, asked again and again for a plan
// below the next bound; a bisection probe below the best is added under an
// assumption literal (or a push) and withdrawn after its check.
#include <chrono>
#include <string>

#include "synth/solver/exact_search.hpp"
#include "synth/solver/z3_deadline.hpp"

namespace shardsynth::synth {
namespace {

double ms_since(ExactSearch::Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(ExactSearch::Clock::now() - start).count();
}

}  // namespace

// Prunes the kernel at the current gap, reduces it again, and runs the loop
// until it proves, stops, or finds a better incumbent worth re-pruning for.
void ExactSearch::solve_pruned() {
  const Narrowed narrowed = narrow_at(best_);
  result_.pruned = narrowed.empty ? ProblemSize{} : size_of(narrowed.problem);
  Z3Check check(narrowed, options_.encoding, 0);
  if (best_) check.solver.add(check.encoding.below(*best_ - narrowed.constant));
  const int64_t gap_at_start = best_ ? *best_ - result_.lower_bound : 0;
  int probes = 0;
  while (!done_) {
    if (at_iteration_limit()) return stop("iteration limit");
    if (out_of_time()) return stop("time limit");
    const unsigned timeout = check_timeout();
    if (timeout > 0) {
      z3::params p(check.ctx);
      p.set("timeout", timeout);
      check.solver.set(p);
    }
    Iteration it;
    it.bound = descent_bound();
    // A probe below best is temporary; `cost < best` holds for good.
    const bool probe = it.bound && it.bound != best_;
    const z3::expr literal = check.ctx.bool_const(("probe#" + std::to_string(probes++)).c_str());
    if (probe) {
      const z3::expr below = check.encoding.below(*it.bound - narrowed.constant);
      if (options_.probes == ProbeMode::push_pop) {
        check.solver.push();
        check.solver.add(below);
      } else {
        check.solver.add(z3::implies(literal, below));
      }
    }
    const auto start = Clock::now();
    it.prepare_ms = prepared_by(start);
    const z3::check_result answer = check_once(check, literal, probe);
    it.solver_ms = ms_since(start);
    it.status = answer == z3::sat ? CheckStatus::sat : answer == z3::unsat ? CheckStatus::unsat : CheckStatus::unknown;
    if (it.status == CheckStatus::sat) score(narrowed, check.encoding, check.solver.get_model(), it);
    if (probe && options_.probes == ProbeMode::push_pop) {
      check.solver.pop();
    } else if (probe) {
      check.solver.add(!literal);
    }
    if (!settle(std::move(it), check, narrowed, gap_at_start)) return;
  }
}

// The next bound: the best cost, or the midpoint of the gap under bisection
// (unset before there is an incumbent).
std::optional<int64_t> ExactSearch::descent_bound() const {
  if (!best_) return std::nullopt;
  if (options_.strategy != SearchStrategy::bisect) return *best_;
  return result_.lower_bound + (*best_ - result_.lower_bound + 1) / 2;
}

// One check, under the probe's literal when it is withdrawn by assumption.
z3::check_result ExactSearch::check_once(Z3Check& check, const z3::expr& literal, bool probe) {
  const Z3Deadline watch(check.ctx, deadline_);
  if (probe && options_.probes == ProbeMode::assumptions) {
    z3::expr_vector assumed(check.ctx);
    assumed.push_back(literal);
    return check.solver.check(assumed);
  }
  return check.solver.check();
}

// Takes a check's answer into the search and reports the step. Returns
// whether to go on with the same solver (false: stopped, or a gap so much
// smaller that narrowing again prunes much more).
bool ExactSearch::settle(Iteration it, Z3Check& check, const Narrowed& narrowed, int64_t gap_at_start) {
  const std::string unknown_reason = it.status == CheckStatus::unknown ? check.solver.reason_unknown() : "";
  if (it.status == CheckStatus::sat) {
    improve(it);
    check.solver.add(check.encoding.below(it.cost - narrowed.constant));
  } else if (it.status == CheckStatus::unsat) {
    if (!it.bound) infeasible();
    raise_lower_bound(*it.bound);  // nothing costs less than the bound
    if (it.bound == best_) {
      result_.proven_optimal = true;
      stop("unsat");
    } else {
      check.solver.add(check.encoding.at_least(*it.bound - narrowed.constant));
    }
  }
  const CheckStatus status = it.status;
  report(std::move(it));
  if (status == CheckStatus::unknown) {
    stop_on_unknown(unknown_reason);
    return false;
  }
  // A much smaller gap prunes much more: rebuild from the kernel.
  return !(status == CheckStatus::sat && options_.dual_bound &&
           (gap_at_start == 0 || 2 * (*best_ - result_.lower_bound) <= gap_at_start));
}

}  // namespace shardsynth::synth
