#include "synth/solver/exact_search.hpp"

#include <algorithm>
#include <utility>

#include "common/error.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/z3_deadline.hpp"

namespace shardsynth::synth {
namespace {

double ms_since(ExactSearch::Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(ExactSearch::Clock::now() - start).count();
}

}  // namespace

ExactSearch::ExactSearch(const Problem& scored, bool relaxed, const CegisOptions& options,
                         std::optional<Clock::time_point> deadline, const IterationCallback& on_iteration,
                         const BoundCallback& on_bound, CegisResult& result)
    : scored_(scored),
      relaxed_(relaxed),
      options_(options),
      deadline_(deadline),
      on_iteration_(on_iteration),
      on_bound_(on_bound),
      result_(result) {}

void ExactSearch::run() {
  last_report_ = Clock::now();
  reduce_first();
  if (!result_.best.empty()) best_ = result_.best_cost;  // an incumbent from the anytime search
  if (options_.strategy == SearchStrategy::optimize) {
    optimize();
  } else if (options_.dual_bound) {
    bound_and_decode();
    bound_by_lp();
    search_by_network();
    search_by_branching();
    search_by_elimination();  // then the loop's first probe, with Z3's budget, may start the branching (exact_branching.cpp)
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

// The exact reductions of the problem (or the prepared ones), and the sizes they leave.
void ExactSearch::reduce_first() {
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
}

// Reparameterizes the kernel: its constant is a lower bound, and the
// assignment decoded on the way is the first incumbent.
void ExactSearch::bound_and_decode() {
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

// z3::optimize on the reduced kernel, as a baseline: one call for the
// optimum, then one plain check below it for the proof.
void ExactSearch::optimize() {
  z3::context ctx;
  InterruptGuard guard(ctx);
  Z3Encoding encoding(ctx, kernel_, options_.encoding);
  z3::optimize opt(ctx);
  if (deadline_) {
    z3::params params(ctx);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
    params.set("timeout", static_cast<unsigned>(std::max<int64_t>(1, left)));
    opt.set(params);
  }
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
  if (answer != z3::sat) {
    stop(out_of_time() ? "time limit" : "unknown");
    report(std::move(it));
    return;
  }
  // Its answer is checked like any other incumbent: the loop that follows
  // must end with unsat below it (and descends if optimize erred).
  it.status = CheckStatus::sat;
  score(narrow_at(std::nullopt), encoding, opt.get_model(), it);
  if (best_ && it.cost >= *best_) return;  // the anytime search's incumbent is as good: the loop proves it
  improve(it);
  report(std::move(it));
}

void ExactSearch::infeasible() const {
  throw common::InputError("problem '" + scored_.name + "' has no feasible assignment");
}

void ExactSearch::raise_lower_bound(int64_t bound) {
  if (bound <= result_.lower_bound) return;
  result_.lower_bound = bound;
  if (!relaxed_ && on_bound_) on_bound_(bound);  // a bound of the relaxation is not published (see run_search)
}

bool ExactSearch::out_of_time() const { return (deadline_ && Clock::now() >= *deadline_) || interrupt_requested(); }

bool ExactSearch::at_iteration_limit() const {
  return options_.max_iterations > 0 && static_cast<int>(result_.iterations.size()) >= options_.max_iterations;
}

void ExactSearch::stop(const std::string& reason) {
  result_.stop_reason = reason;
  done_ = true;
}

// Z3 answered unknown for `reason`: the deadline, or something else that ends the search.
void ExactSearch::stop_on_unknown(const std::string& reason) {
  stop(out_of_time() || reason == "timeout" || reason == "canceled" ? "time limit" : "unknown: " + reason);
}

void ExactSearch::report(Iteration it) {
  it.index = static_cast<int>(result_.iterations.size());
  it.relaxed = relaxed_;
  result_.iterations.push_back(std::move(it));
  if (on_iteration_) on_iteration_(result_.iterations.back());
  last_report_ = Clock::now();
}

// Milliseconds from the last report (or the start) to `start`: the step's preparation.
double ExactSearch::prepared_by(Clock::time_point start) const {
  return std::chrono::duration<double, std::milli>(start - last_report_).count();
}

Narrowed ExactSearch::narrow_at(std::optional<int64_t> bound) const {
  if (bound && eliminated_below_ && *bound <= *eliminated_below_) {
    Narrowed nothing;  // every strategy is in no plan cheaper than the bound (exact_elimination.cpp)
    nothing.empty = true;
    return nothing;
  }
  return narrow(kernel_, offset_, bound, options_.dual_bound, deadline_, lp_.get());
}

// Scores a model of a narrowed problem: expands it back to an original
// assignment, and checks that the evaluator agrees with Z3's value plus
// the constants.
int64_t ExactSearch::score(const Narrowed& narrowed, const Z3Encoding& encoding, const z3::model& model,
                           Iteration& it) {
  it.assignment = expand(first_, expand_narrowed(narrowed, encoding.decode(model)));
  it.cost = evaluate(scored_, it.assignment);
  const int64_t z3_cost = encoding.cost_value(model) + narrowed.constant;
  if (it.cost != z3_cost || it.cost >= kForbidden || (it.bound && it.cost >= *it.bound)) {
    throw EvaluatorMismatch("step " + std::to_string(result_.iterations.size()) + ": the evaluator scores the model " +
                            std::to_string(it.cost) + " but Z3's cost term is " + std::to_string(z3_cost) +
                            (it.bound ? " (bound " + std::to_string(*it.bound) + ")" : ""));
  }
  return it.cost;
}

void ExactSearch::improve(const Iteration& it) {
  result_.best = it.assignment;
  result_.best_cost = it.cost;
  best_ = it.cost;
}

// The per-check Z3 timeout: --check-timeout, capped by what is left of
// --time-limit; 0 = none.
unsigned ExactSearch::check_timeout() const {
  unsigned timeout = options_.check_timeout_ms;
  if (deadline_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
    const auto capped = static_cast<unsigned>(std::max<int64_t>(1, left));
    timeout = timeout == 0 ? capped : std::min(timeout, capped);
  }
  return timeout;
}

}  // namespace shardsynth::synth
