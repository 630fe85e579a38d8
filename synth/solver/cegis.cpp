#include "synth/solver/cegis.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include <z3++.h>

#include "common/error.hpp"
#include "synth/solver/anytime.hpp"
#include "synth/solver/dual_bound.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/lp_tightening.hpp"
#include "synth/solver/reduction.hpp"
#include "synth/solver/time_guard.hpp"
#include "synth/solver/z3_deadline.hpp"
#include "synth/solver/z3_encoding.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

// One solve of `scored` (the problem handed in, or its relaxation without the
// usage limit): reduce, bound, prune, and run the loop on what is left.
// The exact loop's reduction and lower-bound pass, when they were computed
// before it (the check whether to run the anytime search first).
struct Prepared {
  Reduced reduced;  // reduce(problem)
  DualBound dual;   // reparameterize(reduced.kernel) with the default options
  std::optional<LpTightening> lp;  // tighten_with_lp(dual.problem), which fixed it in place (unset: not run)
};

class Search {
 public:
  Search(const Problem& scored, bool relaxed, const CegisOptions& options, std::optional<Clock::time_point> deadline,
         const IterationCallback& on_iteration, const BoundCallback& on_bound, CegisResult& result)
      : scored_(scored),
        relaxed_(relaxed),
        options_(options),
        deadline_(deadline),
        on_iteration_(on_iteration),
        on_bound_(on_bound),
        result_(result) {}

  // Starts from a reduction and bound computed already (for the problem handed in).
  void use(Prepared& prepared) { prepared_ = &prepared; }

  void run() {
    last_report_ = Clock::now();
    result_.original = size_of(scored_);
    if (prepared_ && options_.reduce) {
      first_ = std::move(prepared_->reduced);
    } else {
      first_ = options_.reduce ? reduce(scored_) : identity_reduction(scored_);
    }
    if (first_.constant >= kForbidden) infeasible();
    result_.reduced = size_of(first_.kernel);
    result_.kernel_nodes = result_.reduced.nodes;
    result_.kernel_edges = result_.reduced.edges;
    result_.pruned = result_.reduced;
    kernel_ = first_.kernel;
    offset_ = first_.constant;
    raise_lower_bound(offset_);  // kernel costs are non-negative
    if (!result_.best.empty()) best_ = result_.best_cost;  // an incumbent from the anytime search
    if (options_.strategy == SearchStrategy::optimize) {
      optimize();
    } else if (options_.dual_bound) {
      bound_and_decode();
      bound_by_lp();
    }
    const bool probing = options_.strategy == SearchStrategy::bisect && options_.dual_bound;
    while (!done_) {
      if (probing && best_) {
        probe_pruned();
      } else {
        solve_pruned();
      }
    }
  }

 private:
  [[noreturn]] void infeasible() const {
    throw common::InputError("problem '" + scored_.name + "' has no feasible assignment");
  }

  void raise_lower_bound(int64_t bound) {
    if (bound <= result_.lower_bound) return;
    result_.lower_bound = bound;
    if (!relaxed_ && on_bound_) on_bound_(bound);  // a bound of the relaxation is not published (see run_search)
  }

  bool out_of_time() const { return (deadline_ && Clock::now() >= *deadline_) || interrupt_requested(); }

  void stop(const std::string& reason) {
    result_.stop_reason = reason;
    done_ = true;
  }

  void report(Iteration it) {
    it.index = static_cast<int>(result_.iterations.size());
    it.relaxed = relaxed_;
    result_.iterations.push_back(std::move(it));
    if (on_iteration_) on_iteration_(result_.iterations.back());
    last_report_ = Clock::now();
  }

  // Milliseconds from the last report (or the start) to `start`: the step's preparation.
  double prepared_by(Clock::time_point start) const {
    return std::chrono::duration<double, std::milli>(start - last_report_).count();
  }

  // What Z3 sees for "cost < bound": the kernel pruned at the gap and
  // reduced again, then, while that lets the bound rise, reparameterized,
  // pruned and reduced once more.
  struct Narrowed {
    std::vector<Reduced> chain;  // the reductions applied after the kernel, in order
    Problem problem;             // the last one's kernel (costs reparameterized)
    int64_t constant = 0;        // original cost = constant + problem cost, for every problem assignment
    bool empty = false;          // nothing cheaper than the bound survives
  };

  Narrowed narrow(std::optional<int64_t> bound) const {
    Narrowed n;
    n.constant = offset_;
    if (!options_.dual_bound || !bound) {
      n.chain.push_back(identity_reduction(kernel_));
      n.problem = kernel_;
      return n;
    }
    Problem current = kernel_;
    if (lp_) fix_by_reduced_cost(current, *lp_, *bound - n.constant);  // the LP's reduced costs at the probe
    for (int round = 0;; ++round) {
      n.chain.push_back(reduce(prune_at_gap(current, *bound - n.constant)));
      const Reduced& last = n.chain.back();
      if (last.constant >= kForbidden || n.constant + last.constant >= *bound) {
        n.empty = true;
        return n;
      }
      n.constant += last.constant;
      current = last.kernel;
      if (round == 2 || current.nodes.empty()) break;
      DualOptions dual;
      dual.max_passes = 40;
      dual.deadline = deadline_;
      dual.decode = false;  // only the bound is used here
      DualBound d = reparameterize(current, dual);
      if (d.constant >= kForbidden || n.constant + d.constant >= *bound) {
        n.empty = true;
        return n;
      }
      current = std::move(d.problem);
      n.constant += d.constant;
      if (d.constant == 0) break;  // the bound did not move: pruning again changes nothing
    }
    n.problem = std::move(current);
    return n;
  }

  // The Z3 side of one narrowed problem: its encoding and a solver holding
  // its constraints (and `false` when nothing survived narrowing).
  struct Check {
    z3::context ctx;
    InterruptGuard guard{ctx};  // SIGINT interrupts the check (interrupt.hpp)
    Z3Encoding encoding;
    z3::solver solver;

    Check(const Narrowed& narrowed, EncodingKind kind, unsigned timeout_ms)
        : encoding(ctx, narrowed.empty ? Problem{} : narrowed.problem, kind), solver(ctx) {
      z3::params params(ctx);
      params.set("random_seed", 0u);
      params.set("ctrl_c", false);  // SIGINT is ours (interrupt.hpp)
      if (timeout_ms > 0) params.set("timeout", timeout_ms);
      solver.set(params);
      solver.add(encoding.constraints());
      if (narrowed.empty) solver.add(ctx.bool_val(false));
    }
  };

  // Scores a model of a narrowed problem: expands it back to an original
  // assignment, and checks that the evaluator agrees with Z3's value plus
  // the constants.
  int64_t score(const Narrowed& narrowed, const Z3Encoding& encoding, const z3::model& model, Iteration& it) {
    const int64_t constant = narrowed.constant;
    Assignment a = encoding.decode(model);
    for (auto r = narrowed.chain.rbegin(); r != narrowed.chain.rend(); ++r) a = expand(*r, a);
    it.assignment = expand(first_, a);
    it.cost = evaluate(scored_, it.assignment);
    const int64_t z3_cost = encoding.cost_value(model) + constant;
    if (it.cost != z3_cost || it.cost >= kForbidden || (it.bound && it.cost >= *it.bound)) {
      throw EvaluatorMismatch("step " + std::to_string(result_.iterations.size()) + ": the evaluator scores the model " +
                              std::to_string(it.cost) + " but Z3's cost term is " + std::to_string(z3_cost) +
                              (it.bound ? " (bound " + std::to_string(*it.bound) + ")" : ""));
    }
    return it.cost;
  }

  void improve(const Iteration& it) {
    result_.best = it.assignment;
    result_.best_cost = it.cost;
    best_ = it.cost;
  }

  // Reparameterizes the kernel: its constant is a lower bound, and the
  // assignment decoded on the way is the first incumbent.
  void bound_and_decode() {
    const auto start = Clock::now();
    DualOptions dual;
    dual.deadline = deadline_;
    DualBound d = prepared_ && options_.reduce ? std::move(prepared_->dual) : reparameterize(kernel_, dual);
    if (d.constant >= kForbidden) infeasible();
    kernel_ = std::move(d.problem);
    offset_ += d.constant;
    result_.dual_bound = offset_;
    raise_lower_bound(offset_);
    if (d.primal.empty()) return;
    Iteration it;
    it.source = "dual";
    it.prepare_ms = prepared_by(start);
    it.assignment = expand(first_, d.primal);
    it.cost = evaluate(scored_, it.assignment);
    it.solver_ms = ms_since(start);
    if (it.cost >= kForbidden) return;  // e.g. over the usage limit: leave the first incumbent to Z3
    if (best_ && it.cost >= *best_) return;  // no better than the anytime search's incumbent
    it.status = CheckStatus::sat;
    improve(it);
    report(std::move(it));
  }

  // The LP step (lp_tightening.hpp) on the kernel, with a usage limit: its
  // bound, its rounded plan as a step, and reduced-cost fixing of kernel_ at
  // the best cost (the preparation's, when it ran one).
  void bound_by_lp() {
    // Only memory rows make the LP stronger than the reparameterization's bound.
    if (!options_.lp_bound || !kernel_.usage_limit || (best_ && *best_ <= result_.lower_bound)) return;
    const auto start = Clock::now();
    const std::optional<int64_t> incumbent = best_ ? std::optional<int64_t>(*best_ - offset_) : std::nullopt;
    const bool reuse = prepared_ && prepared_->lp;  // narrow() fixes again at each probe's bound
    LpTightening lp = reuse ? std::move(*prepared_->lp) : tighten_with_lp(kernel_, incumbent, deadline_);
    lp_ = std::move(lp.relaxation);
    // A kernel fixed before bounds only the plans cheaper than the best one.
    raise_lower_bound(best_ ? std::min(offset_ + lp.bound, *best_) : offset_ + lp.bound);
    if (lp.plan.empty() || (best_ && offset_ + lp.plan_cost >= *best_)) return;
    Iteration it;
    it.source = "lp";
    it.status = CheckStatus::sat;
    it.prepare_ms = prepared_by(start);
    it.assignment = expand(first_, lp.plan);
    it.cost = evaluate(scored_, it.assignment);
    it.solver_ms = lp.ms;
    if (it.cost >= kForbidden) return;
    improve(it);
    report(std::move(it));
  }

  // Prunes the kernel at the current gap, reduces it again, and runs the loop
  // until it proves, stops, or finds a better incumbent worth re-pruning for.
  void solve_pruned() {
    const Narrowed narrowed = narrow(best_);
    result_.pruned = narrowed.empty ? ProblemSize{} : size_of(narrowed.problem);
    const int64_t constant = narrowed.constant;
    Check check(narrowed, options_.encoding, 0);
    z3::context& ctx = check.ctx;
    const Z3Encoding& encoding = check.encoding;
    z3::solver& solver = check.solver;
    auto below = [&](int64_t bound) { return encoding.below(bound - constant); };
    if (best_) solver.add(below(*best_));
    const int64_t gap_at_start = best_ ? *best_ - result_.lower_bound : 0;
    int probes = 0;
    while (!done_) {
      if (options_.max_iterations > 0 && static_cast<int>(result_.iterations.size()) >= options_.max_iterations) {
        return stop("iteration limit");
      }
      if (out_of_time()) return stop("time limit");
      const unsigned timeout = check_timeout();
      if (timeout > 0) {
        z3::params p(ctx);
        p.set("timeout", timeout);
        solver.set(p);
      }
      Iteration it;
      if (best_) {
        it.bound = options_.strategy == SearchStrategy::bisect
                       ? result_.lower_bound + (*best_ - result_.lower_bound + 1) / 2
                       : *best_;
      }
      // A probe below best is temporary; `cost < best` holds for good.
      const bool probe = it.bound && it.bound != best_;
      z3::expr literal = ctx.bool_const(("probe#" + std::to_string(probes++)).c_str());
      if (probe && options_.probes == ProbeMode::push_pop) {
        solver.push();
        solver.add(below(*it.bound));
      } else if (probe) {
        solver.add(z3::implies(literal, below(*it.bound)));
      }
      const auto start = Clock::now();
      it.prepare_ms = prepared_by(start);
      z3::check_result answer = z3::unknown;
      {
        const Z3Deadline watch(ctx, deadline_);
        if (probe && options_.probes == ProbeMode::assumptions) {
          z3::expr_vector assumed(ctx);
          assumed.push_back(literal);
          answer = solver.check(assumed);
        } else {
          answer = solver.check();
        }
      }
      it.solver_ms = ms_since(start);
      if (answer == z3::sat) {
        it.status = CheckStatus::sat;
        score(narrowed, encoding, solver.get_model(), it);
      } else {
        it.status = answer == z3::unsat ? CheckStatus::unsat : CheckStatus::unknown;
      }
      if (probe && options_.probes == ProbeMode::push_pop) {
        solver.pop();
      } else if (probe) {
        solver.add(!literal);
      }
      const std::string unknown_reason = it.status == CheckStatus::unknown ? solver.reason_unknown() : "";
      if (it.status == CheckStatus::sat) {
        improve(it);
        solver.add(below(it.cost));
      } else if (it.status == CheckStatus::unsat) {
        if (!it.bound) infeasible();
        raise_lower_bound(*it.bound);  // nothing costs less than the bound
        if (it.bound == best_) {
          result_.proven_optimal = true;
          stop("unsat");
        } else {
          solver.add(encoding.at_least(*it.bound - constant));
        }
      }
      report(std::move(it));
      const auto& last = result_.iterations.back();
      if (last.status == CheckStatus::unknown) {
        return stop(out_of_time() || unknown_reason == "timeout" || unknown_reason == "canceled" ? "time limit"
                                                                                                   : "unknown: " + unknown_reason);
      }
      // A much smaller gap prunes much more: rebuild from the kernel.
      if (last.status == CheckStatus::sat && options_.dual_bound &&
          (gap_at_start == 0 || 2 * (*best_ - result_.lower_bound) <= gap_at_start)) {
        return;
      }
    }
  }

  // Bisection against a tight lower bound: probes just above the bound, on
  // the kernel pruned at the probe, with a fresh solver each time. An unsat
  // raises the proven bound to the probe and doubles the step to the next
  // one; a sat is a better incumbent and halves the step. Probes
  // near the bound prune nearly everything, so each check is small.
  void probe_pruned() {
    if (options_.max_iterations > 0 && static_cast<int>(result_.iterations.size()) >= options_.max_iterations) {
      return stop("iteration limit");
    }
    if (out_of_time()) return stop("time limit");
    if (step_ <= 0) step_ = 1;
    Iteration it;
    it.bound = std::min(*best_, result_.lower_bound + step_);
    // A new incumbent within twice the lower bound: when narrowing at it
    // leaves nothing, the proof is one check away, so ask that instead of
    // climbing towards it from the bound.
    std::optional<Narrowed> at_best;
    if (it.bound != best_ && tried_best_ != best_ && *best_ - result_.lower_bound <= result_.lower_bound) {
      tried_best_ = best_;
      Narrowed n = narrow(best_);
      if (n.empty) {
        it.bound = best_;
        at_best = std::move(n);
      }
    }
    const Narrowed narrowed = at_best ? std::move(*at_best) : narrow(it.bound);
    result_.pruned = narrowed.empty ? ProblemSize{} : size_of(narrowed.problem);
    const int64_t constant = narrowed.constant;
    Check check(narrowed, options_.encoding, check_timeout());
    const Z3Encoding& encoding = check.encoding;
    z3::solver& solver = check.solver;
    solver.add(encoding.below(*it.bound - constant));
    const auto start = Clock::now();
    it.prepare_ms = prepared_by(start);
    z3::check_result answer = z3::unknown;
    {
      const Z3Deadline watch(check.ctx, deadline_);
      answer = solver.check();
    }
    it.solver_ms = ms_since(start);
    if (answer == z3::sat) {
      it.status = CheckStatus::sat;
      score(narrowed, encoding, solver.get_model(), it);
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
    } else {
      const std::string reason = solver.reason_unknown();
      stop(out_of_time() || reason == "timeout" || reason == "canceled" ? "time limit" : "unknown: " + reason);
    }
    report(std::move(it));
  }

  // The per-check Z3 timeout: --check-timeout, capped by what is left of
  // --time-limit; 0 = none.
  unsigned check_timeout() const {
    unsigned timeout = options_.check_timeout_ms;
    if (deadline_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
      const auto capped = static_cast<unsigned>(std::max<int64_t>(1, left));
      timeout = timeout == 0 ? capped : std::min(timeout, capped);
    }
    return timeout;
  }

  // z3::optimize on the reduced kernel, as a baseline: one call for the
  // optimum, then one plain check below it for the proof.
  void optimize() {
    z3::context ctx;
    InterruptGuard guard(ctx);
    Z3Encoding encoding(ctx, kernel_, options_.encoding);
    z3::optimize opt(ctx);
    z3::params params(ctx);
    if (deadline_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
      params.set("timeout", static_cast<unsigned>(std::max<int64_t>(1, left)));
    }
    if (deadline_) opt.set(params);
    for (const auto& c : encoding.constraints()) opt.add(c);
    opt.minimize(encoding.cost_term());
    const auto start = Clock::now();
    z3::check_result answer = z3::unknown;
    {
      const Z3Deadline watch(ctx, deadline_);
      answer = opt.check();
    }
    Iteration it;
    it.source = "z3-optimize";
    it.prepare_ms = prepared_by(start);
    it.solver_ms = ms_since(start);
    if (answer == z3::unsat) infeasible();
    if (answer == z3::sat) {
      // Its answer is checked like any other incumbent: the loop that follows
      // must end with unsat below it (and descends if optimize erred).
      it.status = CheckStatus::sat;
      score(narrow(std::nullopt), encoding, opt.get_model(), it);
      if (best_ && it.cost >= *best_) return;  // the anytime search's incumbent is as good: the loop proves it
      improve(it);
    } else {
      stop(out_of_time() ? "time limit" : "unknown");
    }
    report(std::move(it));
  }

  const Problem& scored_;
  bool relaxed_;
  const CegisOptions& options_;
  std::optional<Clock::time_point> deadline_;
  const IterationCallback& on_iteration_;
  const BoundCallback& on_bound_;
  CegisResult& result_;
  Prepared* prepared_ = nullptr;  // reduction and bound computed before the search (moved from), or null
  Reduced first_;                // the exact reductions of scored_
  Problem kernel_;               // first_.kernel, reparameterized when dual_bound is on
  int64_t offset_ = 0;           // scored_ cost = offset_ + kernel_ cost, for every kernel assignment
  std::optional<int64_t> best_;  // best cost so far
  int64_t step_ = 0;             // bisection: distance of the next probe above the lower bound; 0 = start at 1
  std::optional<int64_t> tried_best_;  // bisection: the last incumbent whose narrowing was tried for an immediate proof
  std::shared_ptr<const LpRelaxation> lp_;  // the LP relaxation of kernel_ (lp_tightening.hpp), null when none
  bool done_ = false;
  Clock::time_point last_report_;  // when the last step was reported (or the search began)
};

}  // namespace

std::optional<Clock::time_point> search_deadline(const CegisOptions& options, Clock::time_point start) {
  std::optional<Clock::time_point> deadline = options.deadline;
  if (options.time_limit_s) {
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*options.time_limit_s));
    deadline = deadline ? std::min(*deadline, end) : end;
  }
  return deadline;
}

ProblemSize size_of(const Problem& problem) {
  ProblemSize s{static_cast<int>(problem.nodes.size()), static_cast<int>(problem.edges.size()), 0};
  for (const auto& node : problem.nodes) {
    s.strategies += std::count_if(node.costs.begin(), node.costs.end(), [](int64_t c) { return c < kForbidden; });
  }
  return s;
}

double CegisResult::relative_gap() const {
  if (proven_optimal || best.empty() || best_cost <= 0) return 0;
  return static_cast<double>(best_cost - lower_bound) / static_cast<double>(best_cost);
}

namespace {

// The plans to start from, scored in order: each allowed one cheaper than
// the best so far is a step and the new best.
void score_starts(const Problem& problem, const std::vector<StartPlan>& starts, const IterationCallback& on_iteration,
                  CegisResult& result) {
  for (const StartPlan& start : starts) {
    if (start.assignment.size() != problem.nodes.size()) {
      throw std::invalid_argument("start plan '" + start.source + "' has " + std::to_string(start.assignment.size()) +
                                  " strategies for a problem of " + std::to_string(problem.nodes.size()) + " nodes");
    }
    Iteration it;
    it.index = static_cast<int>(result.iterations.size());
    it.status = CheckStatus::sat;
    it.assignment = start.assignment;
    it.cost = evaluate(problem, it.assignment);
    it.source = start.source;
    it.solver_ms = start.found_ms;
    if (it.cost >= kForbidden || (!result.best.empty() && it.cost >= result.best_cost)) continue;
    result.best = it.assignment;
    result.best_cost = it.cost;
    result.iterations.push_back(std::move(it));
    if (on_iteration) on_iteration(result.iterations.back());
  }
}

// The anytime search before the exact loop. Its improving plans are steps
// of the result; a plan it proves optimal (Z3 on the whole kernel) ends the
// run, and so does its stop on a problem too large for the exact loop. On
// smaller problems it gets half of the time limit (or runs until it
// stalls), and its best plan becomes the exact loop's first incumbent.
// Returns whether the run is over.
bool run_anytime(const Problem& problem, const CegisOptions& options, std::optional<Clock::time_point> deadline,
                 const IterationCallback& on_iteration, CegisResult& result, std::optional<Prepared>& prepared) {
  const bool exact_after = static_cast<int>(problem.nodes.size()) <= kExactLoopMaxNodes;
  int64_t good_enough = 0;  // with the LP: a plan within 1% of its bound ends the anytime search
  if (exact_after && options.anytime == AnytimeMode::automatic) {
    // Where the exact loop's own first incumbent (the decoded lower-bound
    // pass, which keeps the usage limit) is within 1% of its bound, the
    // limit does not bind much and the exact loop alone is fastest.
    prepared.emplace();
    prepared->reduced = reduce(problem);
    if (prepared->reduced.constant >= kForbidden) return false;  // the exact loop reports it
    DualOptions dual;
    dual.deadline = deadline;
    prepared->dual = reparameterize(prepared->reduced.kernel, dual);
    const DualBound& d = prepared->dual;
    if (d.constant >= kForbidden) return false;
    int64_t plan = d.primal.empty() ? kForbidden : d.primal_cost;  // best plan and bound, in reduced-kernel costs
    int64_t bound = d.constant;
    if (options.lp_bound) {  // the LP step (lp_tightening.hpp), kept for the exact loop
      prepared->lp = tighten_with_lp(prepared->dual.problem, d.primal.empty() ? std::nullopt : std::optional(plan - d.constant), deadline);
      plan = std::min(plan, cost_add(prepared->lp->plan_cost, d.constant));
      bound = std::max(bound, d.constant + prepared->lp->bound);
    }
    if (plan < kForbidden && plan - bound <= plan / 100) return false;
    if (options.lp_bound) good_enough = prepared->reduced.constant + bound + bound / 99;
  }
  if (options.starts) score_starts(problem, options.starts(deadline), on_iteration, result);
  AnytimeOptions anytime;
  anytime.start = result.best;  // the cheapest start plan, if any
  anytime.threads = std::max(1, options.threads);
  anytime.seed = options.seed;
  anytime.deadline = deadline;
  if (exact_after && deadline) anytime.deadline = Clock::now() + (*deadline - Clock::now()) / 2;
  // Stalling ends it: soon before the exact loop; on large problems without
  // a limit, after many rounds; with a limit, only the deadline does.
  anytime.stall_rounds = exact_after ? (deadline ? 0 : 4) : (deadline ? 0 : 400);
  // Before the exact loop, Z3 works on the whole problem there instead.
  anytime.region_attempts = exact_after ? 0 : 4;
  anytime.good_enough = good_enough;
  auto last = Clock::now();
  const AnytimeResult found = anytime_search(problem, anytime, [&](const AnytimeStep& step) {
    Iteration it;
    it.index = static_cast<int>(result.iterations.size());
    it.status = CheckStatus::sat;
    it.assignment = step.assignment;
    it.cost = step.cost;
    it.source = step.by_region ? "z3-region" : "search";
    it.solver_ms = ms_since(last);
    last = Clock::now();
    result.iterations.push_back(std::move(it));
    if (on_iteration) on_iteration(result.iterations.back());
  });
  result.original = size_of(problem);
  result.reduced = result.pruned = {found.kernel_nodes, found.kernel_edges, 0};
  result.kernel_nodes = found.kernel_nodes;
  result.kernel_edges = found.kernel_edges;
  if (found.infeasible) throw common::InputError("problem '" + problem.name + "' has no feasible assignment");
  result.lower_bound = std::max(result.lower_bound, found.lower_bound);
  if (!found.best.empty()) {
    result.best = found.best;
    result.best_cost = found.best_cost;
  }
  if (found.proven_optimal) {
    // Z3's unsat below the best plan on the whole kernel: the proof, as a step.
    Iteration it;
    it.index = static_cast<int>(result.iterations.size());
    it.bound = found.best_cost;
    it.status = CheckStatus::unsat;
    it.source = "z3-region";
    result.iterations.push_back(it);
    if (on_iteration) on_iteration(result.iterations.back());
    result.proven_optimal = true;
    result.lower_bound = found.best_cost;
    result.stop_reason = "unsat";
    return true;
  }
  const bool out_of_time = (deadline && Clock::now() >= *deadline) || interrupt_requested();
  if (out_of_time || !exact_after) {
    result.stop_reason = out_of_time ? "time limit" : "stalled";
    return true;
  }
  return false;
}


CegisResult run_search(const Problem& problem, const CegisOptions& options, const IterationCallback& on_iteration,
                       const BoundCallback& on_bound) {
  validate(problem);
  const std::optional<Clock::time_point> deadline = search_deadline(options, Clock::now());
  CegisResult result;
  if (problem.usage_limit && options.relax_usage) {
    // The optimum without the limit is a lower bound; when it fits, it is the optimum.
    Problem relaxed = problem;
    relaxed.usage_limit.reset();
    Search(relaxed, true, options, deadline, on_iteration, on_bound, result).run();
    if (result.proven_optimal && within_usage_limit(problem, result.best)) {
      result.original = size_of(problem);
      return result;
    }
    // Otherwise keep its bound and trace, and solve the limited problem.
    CegisResult limited;
    limited.iterations = std::move(result.iterations);
    limited.lower_bound = result.proven_optimal ? result.lower_bound : 0;
    if (result.stop_reason == "time limit") {
      limited.stop_reason = "time limit";
      return limited;
    }
    result = std::move(limited);
  }
  std::optional<Prepared> prepared;
  if (options.anytime == AnytimeMode::always ||
      (options.anytime == AnytimeMode::automatic && problem.usage_limit && options.reduce && options.dual_bound)) {
    if (run_anytime(problem, options, deadline, on_iteration, result, prepared)) return result;
    if (on_bound) on_bound(result.lower_bound);
  }
  Search search(problem, false, options, deadline, on_iteration, on_bound, result);
  if (prepared) search.use(*prepared);
  search.run();
  return result;
}

}  // namespace


CegisResult run_cegis(const Problem& problem, const CegisOptions& options, const IterationCallback& on_iteration) {
  try {
    if (!options.time_limit_s && !options.deadline) return run_search(problem, options, on_iteration, nullptr);
    return run_within_time_limit(problem, options, on_iteration, run_search);
  } catch (const z3::exception& e) {
    throw SolverError(std::string("z3: ") + e.msg());
  }
}

}  // namespace shardsynth::synth
