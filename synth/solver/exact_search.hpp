#pragma once
// The exact loop on one problem (the problem handed in, or its relaxation
// without the usage limit): reduce it exactly, reparameterize it for a
// lower bound and a decoded first incumbent, then ask Z3 for cheaper plans
// on the kernel narrowed at the gap (narrowing.hpp; with a usage limit,
// also by the LP relaxation's bound and reduced costs, exact_lp.cpp; and,
// before Z3, the cost network's branch and bound on the folded problem,
// exact_network.cpp, branch and bound on the LP, exact_branching.cpp, then
// the Pareto elimination's cutoffs, exact_elimination.cpp) until
// it answers unsat below the best plan. Three bound schedules (SearchStrategy):
//   - descent (exact_descent.cpp): one solver on the narrowed kernel, asked
//     for anything cheaper than the best, or below the midpoint of the gap
//     under bisection without the lower-bound pass;
//   - bisect (exact_probe.cpp): probes just above the proven bound, each on
//     the kernel narrowed at the probe, with a fresh solver;
//   - optimize (exact_search.cpp): z3::optimize once, then the proof.
// Every model is expanded back to the problem and scored by the evaluator,
// which must agree with Z3's value of the cost term (EvaluatorMismatch).
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <z3++.h>

#include "synth/solver/dual_bound.hpp"
#include "synth/solver/elimination_search.hpp"
#include "synth/solver/lp_tightening.hpp"
#include "synth/solver/narrowing.hpp"
#include "synth/solver/network_input.hpp"
#include "synth/solver/reduction.hpp"
#include "synth/solver/solver_types.hpp"
#include "synth/solver/z3_check.hpp"
#include "synth/solver/z3_encoding.hpp"

namespace shardsynth::synth {

// The exact loop's reduction and lower-bound pass, when they were computed
// before it (the check whether to run the anytime search first).
struct PreparedKernel {
  Reduced reduced;                 // reduce(problem)
  DualBound dual;                  // reparameterize(reduced.kernel) with the default options
  std::optional<LpTightening> lp;  // tighten_with_lp(dual.problem), which fixed it in place (unset: not run)
  std::optional<EliminationSearch> elimination;  // close_by_elimination on dual.problem below the better of its plans (unset: not run)
  std::optional<NetworkRun> network;  // the network step's search below the better of its plans, kept when it closed (unset: not run or open)
};

class ExactSearch {
 public:
  using Clock = std::chrono::steady_clock;

  // `relaxed`: `scored` is the relaxation without the usage limit (its steps
  // are marked so, and its bounds are not published). Steps and the result
  // go to `result`, which may hold an incumbent already (the anytime search's).
  ExactSearch(const Problem& scored, bool relaxed, const CegisOptions& options, std::optional<Clock::time_point> deadline,
              const IterationCallback& on_iteration, const BoundCallback& on_bound, CegisResult& result);

  // Starts from a reduction and bound computed already (moved from).
  void use(PreparedKernel& prepared) { prepared_ = &prepared; }

  // Runs until proof, limit, or Z3's unknown.
  void run();

 private:
  // Setting up (exact_search.cpp).
  void reduce_first();
  void bound_and_decode();
  void bound_by_lp();
  void search_by_elimination();
  void search_by_network();
  void search_by_branching();
  bool may_branch() const;
  uint64_t probe_rlimit() const;
  void branch();
  void report_elimination(const EliminationSearch& found, Clock::time_point start);
  void optimize();
  // The descent schedule (exact_descent.cpp).
  void solve_pruned();
  std::optional<int64_t> descent_bound() const;
  z3::check_result check_once(Z3Check& check, const z3::expr& literal, bool probe);
  bool settle(Iteration it, Z3Check& check, const Narrowed& narrowed, int64_t gap_at_start);
  // The bisection schedule (exact_probe.cpp).
  void probe_pruned();
  std::optional<Narrowed> narrowed_at_best(Iteration& it);
  // Shared steps (exact_search.cpp).
  [[noreturn]] void infeasible() const;
  void raise_lower_bound(int64_t bound);
  bool out_of_time() const;
  bool at_iteration_limit() const;
  void stop(const std::string& reason);
  void stop_on_unknown(const std::string& reason);
  void report(Iteration it);
  double prepared_by(Clock::time_point start) const;
  Narrowed narrow_at(std::optional<int64_t> bound) const;
  int64_t score(const Narrowed& narrowed, const Z3Encoding& encoding, const z3::model& model, Iteration& it);
  void improve(const Iteration& it);
  unsigned check_timeout() const;

  const Problem& scored_;                    // the problem every model is scored on
  bool relaxed_;                             // scored_ is the relaxation without the usage limit
  const CegisOptions& options_;              // the search's options
  std::optional<Clock::time_point> deadline_;  // end of the search (unset = none)
  const IterationCallback& on_iteration_;    // called with each step
  const BoundCallback& on_bound_;            // called with each rise of the published lower bound
  CegisResult& result_;                      // steps, best plan and bounds so far
  PreparedKernel* prepared_ = nullptr;       // reduction and bound computed before the search (moved from), or null
  Reduced first_;                            // the exact reductions of scored_
  Problem kernel_;                           // first_.kernel, reparameterized when dual_bound is on
  int64_t offset_ = 0;                       // scored_ cost = offset_ + kernel_ cost, for every kernel assignment
  std::optional<int64_t> best_;              // best cost so far
  int64_t step_ = 0;                         // bisection: distance of the next probe above the lower bound; 0 = start at 1
  std::optional<int64_t> tried_best_;        // bisection: the last incumbent whose narrowing was tried for an immediate proof
  std::shared_ptr<const LpRelaxation> lp_;   // the LP relaxation of kernel_ (lp_tightening.hpp), null when none
  std::optional<int64_t> eliminated_below_;  // the elimination (or the branching) proved no plan cheaper than this (a cost of scored_): narrowing at or below it leaves nothing
  bool branched_ = false;                    // the branching ran (it runs at most once)
  bool done_ = false;                        // the search has stopped (result_.stop_reason says why)
  Clock::time_point last_report_;            // when the last step was reported (or the search began)
};

}  // namespace shardsynth::synth
