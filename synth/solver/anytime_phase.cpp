#include "synth/solver/anytime_phase.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "common/error.hpp"
#include "synth/solver/anytime.hpp"
#include "synth/solver/anytime_network.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/lp_tightening.hpp"
#include "synth/solver/network_input.hpp"
#include "synth/solver/reduction.hpp"
#include "synth/solver/step_publish.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// Steps of the memory dual per epoch of the anytime search, and the
// largest kernel it runs on.
constexpr int kDualStepsPerEpoch = 8;
constexpr int kDualMaxKernelNodes = 4000;
// Before the exact loop: epochs in a row without a cheaper plan after
// which the memory dual leaves.
constexpr int kDualPatienceEpochs = 32;
// Where the anytime search is the whole search (above kExactLoopMaxNodes):
// a search that has lagged the best plan for this many epochs, and whose
// own best fell by less than its distance to it in them (falls_too_slowly
// in anytime.hpp), starts afresh with the next unused seed. A search's
// basin is mostly settled in its first rounds (on the contest's M, seed 4
// reached 0.23% below seeds 1-3 and 5-8 by round 9 and kept it), so a
// stuck laggard is worth more as a new start. 10 epochs rather than 20:
// on M, with 20, no seed of 1-3 left the basin at 49,969e6 in 60 s; with
// 10, all three reached 49,952.8e6 (BENCHMARKS.md, "Issue 32: Z3's
// encoding over classes").
constexpr long kRestartAfterEpochs = 10;
// There too: Z3 regions per application of the z3-region neighbourhood
// (region_neighbourhood.hpp). One rather than four: on the contest's M, four
// took 72% of the searches' time for 12 of 170 improvements (the branch and
// bound 16% for 22), so in 40 s each search ran 250 rounds instead of 580,
// and fewer restarts reached fewer basins. With one, M and S at 60 s were
// cheaper on seeds 1-3, and the development set's large members' mean gap
// fell on all three seeds (BENCHMARKS.md, "Issue 32: one Z3 region a round").
constexpr int kRegionAttemptsAlone = 1;
// Before the exact loop, with a time limit: the stall rule hands the time
// over to the exact loop only once the best plan is within this many
// percent of the exact loop's bound (`proven` in run_anytime_phase). There
// the proof is within reach: B-t101, G-t101 and s816-t were 1.1%, 1.5% and
// 0.3% above it. Further above, the exact loop finds neither a plan nor a
// proof in a contest minute (d816-b 9.7%, d816-t 11.7%: 45 s without a
// step), while the searches, left to their half of the time, reach both
// problems' optima on seeds 1-3 (BENCHMARKS.md, "Issue 32: the searches
// keep the time the exact loop cannot use").
constexpr int64_t kStallWithinPercent = 3;
// Where the network step follows the anytime search
// (AfterAnytime::network_step), the searches leave it 1/kNetworkStepShare
// of the time left. A quarter at first (the whole network's search alone:
// its plans came within seconds, BENCHMARKS.md, "Issue 32: the minute
// beyond the proof's reach"); half since the step begins with regions of
// the network (anytime_network.hpp): on h3k9 at 60 s, seed 1, a quarter
// gave 983,991,590, a half 982,722,813, three quarters 985,895,857
// (BENCHMARKS.md, "Issue 32: regions of the cost network").
constexpr int kNetworkStepShare = 2;
// Where the regions alone follow (AfterAnytime::regions_step), the
// searches leave them this share of the time left: on d10k-a and h4k5 at
// 60 s a half gave plans within 0.01% of a quarter's (BENCHMARKS.md,
// "Issue 32: regions of the cost network"), and on larger problems the
// searches' rounds count for more.
constexpr int kRegionsStepShare = 4;

double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

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
    it.status = CheckStatus::sat;
    it.assignment = start.assignment;
    it.cost = evaluate(problem, it.assignment);
    it.source = start.source;
    it.solver_ms = start.found_ms;
    if (it.cost >= kForbidden || (!result.best.empty() && it.cost >= result.best_cost)) continue;
    result.best = it.assignment;
    result.best_cost = it.cost;
    publish_step(std::move(it), on_iteration, result);
  }
}

// With the LP's duals and a plan, the Pareto elimination gets half of
// the time left (elimination_search.hpp): when it proves its plan optimal,
// the exact loop alone reports it (exact_elimination.cpp); otherwise what
// it proved raises `bound`.
bool eliminate_first(const CegisOptions& options, std::optional<Clock::time_point> deadline, PreparedKernel& prepared,
                     int64_t plan, int64_t& bound) {
  const auto& lp = prepared.lp->relaxation;
  if (!options.elimination || !lp || plan >= kForbidden || plan <= bound) return false;
  std::optional<Clock::time_point> until = deadline;
  if (deadline) until = Clock::now() + (*deadline - Clock::now()) / 2;
  const int64_t constant = prepared.dual.constant;
  prepared.elimination = close_by_elimination(prepared.dual.problem, *lp, plan - constant, until);
  bound = std::max(bound, constant + prepared.elimination->bound);
  return prepared.elimination->proven();
}

// Where the exact loop's own first incumbent (the decoded lower-bound pass,
// which keeps the usage limit, or the LP's rounded plan) is within 1% of the
// better of its two bounds (TRW-S, the LP: lp_tightening.hpp), the limit
// does not bind much and the exact loop alone is fastest. Also true when the
// reduction or the bound finds the problem infeasible: the exact loop
// reports it. Otherwise `proven` is that bound on `problem` (reductions'
// constant included), and, with the LP, `good_enough` the cost within 1% of
// it that lets the anytime search stop early for the exact loop.
// The exact loop's network step (exact_network.cpp), run here below the
// better of the decoded and rounded plans: when it closes, the exact loop
// alone reports its plans and its proof (PreparedKernel::network) and
// neither the elimination nor the anytime search runs. `plan` is in
// reduced-kernel costs.
bool network_first(const Problem& problem, const CegisOptions& options, std::optional<Clock::time_point> deadline,
                   PreparedKernel& prepared, int64_t plan) {
  if (options.network_work <= 0 || !problem.usage_limit || plan >= kForbidden) return false;
  const DualBound& d = prepared.dual;
  const LpTightening& lp = *prepared.lp;
  const bool rounded = !lp.plan.empty() && cost_add(lp.plan_cost, d.constant) == plan;
  const Assignment hint = expand(prepared.reduced, rounded ? lp.plan : d.primal);
  std::optional<Clock::time_point> until = deadline;
  if (deadline) until = Clock::now() + (*deadline - Clock::now()) / 4;
  // a sixteenth of the exact loop's budget (250M values, about 0.3-0.5 s):
  // a search that closes here closes in little (s816-t: 222M values), and
  // one that does not gets the anytime search's plan as its incumbent
  // later; with a quarter (1e9), d816-t's anytime search lost 1-2 s of 20
  // to a search that could not close from the LP's plan
  auto run = run_network_search(problem, d.problem, lp.relaxation.get(), prepared.reduced.constant + plan, hint,
                                options.network_work / 16, kNetworkFirstMaxVariables, until,
                                /*climb=*/true, std::max(1, options.threads));
  if (!run || run->found.outcome != "closed") return false;
  prepared.network = std::move(run);
  return true;
}

bool exact_loop_alone(const Problem& problem, const CegisOptions& options, std::optional<Clock::time_point> deadline,
                      std::optional<PreparedKernel>& prepared, int64_t& good_enough, int64_t& proven) {
  prepared.emplace();
  prepared->reduced = reduce(problem);
  if (prepared->reduced.constant >= kForbidden) return true;
  DualOptions dual;
  dual.deadline = deadline;
  prepared->dual = reparameterize(prepared->reduced.kernel, dual);
  const DualBound& d = prepared->dual;
  if (d.constant >= kForbidden) return true;
  int64_t plan = d.primal.empty() ? kForbidden : d.primal_cost;  // best plan and bound, in reduced-kernel costs
  int64_t bound = d.constant;
  if (options.lp_bound) {  // the LP step, kept for the exact loop
    prepared->lp = tighten_with_lp(prepared->dual.problem,
                                   d.primal.empty() ? std::nullopt : std::optional<int64_t>(plan - d.constant), deadline);
    plan = std::min(plan, cost_add(prepared->lp->plan_cost, d.constant));
    bound = std::max(bound, d.constant + prepared->lp->bound);
    if (network_first(problem, options, deadline, *prepared, plan)) return true;
    if (eliminate_first(options, deadline, *prepared, plan, bound)) return true;
  }
  if (plan < kForbidden && plan - bound <= plan / 100) return true;
  proven = cost_add(prepared->reduced.constant, bound);
  if (options.lp_bound) good_enough = prepared->reduced.constant + bound + bound / 99;
  return false;
}

AnytimeOptions anytime_options(const CegisOptions& options, std::optional<Clock::time_point> deadline,
                               const CegisResult& result, bool exact_after) {
  AnytimeOptions anytime;
  anytime.start = result.best;  // the cheapest start plan, if any
  anytime.threads = std::max(1, options.threads);
  anytime.seed = options.seed;
  anytime.deadline = deadline;
  if (exact_after && deadline) anytime.deadline = Clock::now() + (*deadline - Clock::now()) / 2;
  // Stalling ends it: before the exact loop, without a time limit soon, and
  // with one once it has gone four times the rounds it took to its best
  // plan without improving, at least 1,000 (why four, and why not half the
  // limit as before: BENCHMARKS.md, "Issue 32, continued"), and only once
  // its best plan is near the exact loop's bound (kStallWithinPercent,
  // set in run_anytime_phase); on large
  // problems without a limit, after many rounds; with a limit, only the
  // deadline ends it there.
  anytime.stall_rounds = exact_after ? (deadline ? 1000 : 4) : (deadline ? 0 : 400);
  if (exact_after && deadline) anytime.stall_ratio = 4;
  // Before the exact loop, Z3 works on the whole problem there instead.
  anytime.region_attempts = exact_after ? 0 : kRegionAttemptsAlone;
  // The memory dual (memory_dual.hpp; BENCHMARKS.md, issue 33): where no
  // exact loop follows (problems too large for the LP) it is the bound under
  // the limit; before the exact loop (which runs the anytime search only
  // where the limit binds: exact_loop_alone) its probes and relinked mixes
  // are plans the searches alone do not reach.
  anytime.dual_steps = kDualStepsPerEpoch;
  // Before the exact loop, the searches' first plans come first: the dual's
  // steps hold each epoch back, and with little CPU (a loaded machine) the
  // searches then reach fewer rounds by the deadline (BENCHMARKS.md, issue
  // 33, fifth part).
  anytime.dual_after_stall = exact_after;
  // There it also leaves once its epochs stop paying: on a small kernel
  // its steps outlast the searches' rounds several times over, and the
  // stall rule's rounds then take that much longer before the exact loop
  // proves (B-t101: 1,600 rounds at 36 ms each; BENCHMARKS.md, issue 32,
  // fifth part). Where its plans help they come soon after it joins
  // (medium 4L 2x4 @40%: the 9,042,442 plan at round 25).
  if (exact_after) anytime.dual_patience = kDualPatienceEpochs;
  // On larger kernels a dual step outlasts the searches' rounds and the
  // epochs wait for it (the contest's M, 5,404 kernel nodes: bound 41.1e9
  // in 60 s with the dual, 47.4e9 without; BENCHMARKS.md, issue 33).
  anytime.dual_max_kernel_nodes = kDualMaxKernelNodes;
  if (!exact_after) anytime.restart_after = kRestartAfterEpochs;
  return anytime;
}

// Takes the anytime search's result into `result`; a proof ends the run
// with Z3's unsat below the best plan on the whole kernel, as a step.
bool take_found(const Problem& problem, const AnytimeResult& found, const IterationCallback& on_iteration,
                CegisResult& result) {
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
  if (!found.proven_optimal) return false;
  Iteration it;
  it.bound = found.best_cost;
  it.status = CheckStatus::unsat;
  it.source = "z3-region";
  publish_step(std::move(it), on_iteration, result);
  result.proven_optimal = true;
  result.lower_bound = found.best_cost;
  result.stop_reason = "unsat";
  return true;
}

}  // namespace

AfterAnytime after_anytime(const Problem& problem, std::optional<std::chrono::steady_clock::time_point> deadline) {
  const bool small = static_cast<int>(problem.nodes.size()) <= kExactLoopMaxNodes;
  if (!deadline) return small ? AfterAnytime::exact_loop : AfterAnytime::nothing;
  const FoldedProblem folded = fold_problem(problem, deadline);
  if (folded.infeasible) return small ? AfterAnytime::exact_loop : AfterAnytime::nothing;
  const std::size_t variables = folded.kernel.nodes.size();
  if (small && variables <= kNetworkFirstMaxVariables) return AfterAnytime::exact_loop;
  if (!problem.usage_limit) return AfterAnytime::nothing;
  if (variables <= kNetworkMaxVariables) return AfterAnytime::network_step;
  const bool regions = variables <= kRegionsMaxVariables && rows_bytes_bound(folded) <= kRegionsMaxRowBytes;
  return regions ? AfterAnytime::regions_step : AfterAnytime::nothing;
}

bool run_anytime_phase(const Problem& problem, const CegisOptions& options, std::optional<Clock::time_point> deadline,
                       const IterationCallback& on_iteration, const BoundCallback& on_bound, CegisResult& result,
                       std::optional<PreparedKernel>& prepared) {
  const AfterAnytime after = after_anytime(problem, deadline);
  const bool exact_after = after == AfterAnytime::exact_loop;
  int64_t good_enough = 0;  // with the LP: a plan within 1% of its bound ends the anytime search
  int64_t proven = 0;       // the exact loop's bound computed before the anytime search, on `problem`
  if (exact_after && options.anytime == AnytimeMode::automatic &&
      exact_loop_alone(problem, options, deadline, prepared, good_enough, proven)) {
    return false;
  }
  raise_result_bound(proven, on_bound, result);
  if (options.starts) score_starts(problem, options.starts(deadline), on_iteration, result);
  auto last = Clock::now();
  AnytimeOptions anytime = anytime_options(options, deadline, result, exact_after);
  if (after == AfterAnytime::network_step && options.network_work > 0) {
    anytime.deadline = *deadline - (*deadline - Clock::now()) / kNetworkStepShare;
  }
  if (after == AfterAnytime::regions_step && options.network_work > 0) {
    anytime.deadline = *deadline - (*deadline - Clock::now()) / kRegionsStepShare;
  }
  anytime.good_enough = good_enough;
  if (exact_after && deadline && proven > 0) anytime.stall_below = proven + proven / 100 * kStallWithinPercent;
  anytime.on_bound = [&](int64_t bound) { raise_result_bound(bound, on_bound, result); };
  const AnytimeResult found = anytime_search(problem, anytime, [&](const AnytimeStep& step) {
        Iteration it;
        it.status = CheckStatus::sat;
        it.assignment = step.assignment;
        it.cost = step.cost;
        it.source = step.by_region ? "z3-region" : "search";
        it.solver_ms = ms_since(last);
        last = Clock::now();
        publish_step(std::move(it), on_iteration, result);
      });
  if (take_found(problem, found, on_iteration, result)) return true;
  const auto out_of_time = [&] { return (deadline && Clock::now() >= *deadline) || interrupt_requested(); };
  if (after == AfterAnytime::network_step && !out_of_time()) {
    search_network_after_anytime(problem, options, deadline, on_iteration, on_bound, result);
    if (!result.best.empty() && result.lower_bound >= result.best_cost) {
      result.stop_reason = "no cheaper plan: the network search closed";
      return true;
    }
  }
  if (after == AfterAnytime::regions_step && !out_of_time()) {
    search_regions_after_anytime(problem, options, deadline, on_iteration, result);
  }
  if (out_of_time() || !exact_after) {
    result.stop_reason = out_of_time() ? "time limit" : "stalled";
    return true;
  }
  return false;
}

}  // namespace shardsynth::synth
