#include "synth/solver/cegis.hpp"

#include <chrono>
#include <optional>
#include <string>

#include <z3++.h>

#include "synth/solver/anytime_phase.hpp"
#include "synth/solver/exact_search.hpp"
#include "synth/solver/time_guard.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// With a usage limit and relax_usage: the optimum without the limit is a
// lower bound, and when it fits, it is the optimum. Returns whether the run
// is over; otherwise `result` keeps the relaxation's trace and proven bound.
bool solve_relaxed_first(const Problem& problem, const CegisOptions& options, std::optional<Clock::time_point> deadline,
                         const IterationCallback& on_iteration, const BoundCallback& on_bound, CegisResult& result) {
  Problem relaxed = problem;
  relaxed.usage_limit.reset();
  ExactSearch(relaxed, true, options, deadline, on_iteration, on_bound, result).run();
  if (result.proven_optimal && within_usage_limit(problem, result.best)) {
    result.original = size_of(problem);
    return true;
  }
  CegisResult limited;
  limited.iterations = std::move(result.iterations);
  limited.lower_bound = result.proven_optimal ? result.lower_bound : 0;
  const bool out_of_time = result.stop_reason == "time limit";
  if (out_of_time) limited.stop_reason = "time limit";
  result = std::move(limited);
  return out_of_time;
}

bool wants_anytime(const Problem& problem, const CegisOptions& options) {
  return options.anytime == AnytimeMode::always ||
         (options.anytime == AnytimeMode::automatic && problem.usage_limit && options.reduce && options.dual_bound);
}

CegisResult run_search(const Problem& problem, const CegisOptions& options, const IterationCallback& on_iteration,
                       const BoundCallback& on_bound) {
  validate(problem);
  const std::optional<Clock::time_point> deadline = search_deadline(options, Clock::now());
  CegisResult result;
  if (problem.usage_limit && options.relax_usage &&
      solve_relaxed_first(problem, options, deadline, on_iteration, on_bound, result)) {
    return result;
  }
  std::optional<PreparedKernel> prepared;
  if (wants_anytime(problem, options)) {
    if (run_anytime_phase(problem, options, deadline, on_iteration, on_bound, result, prepared)) return result;
    if (on_bound) on_bound(result.lower_bound);
  }
  ExactSearch search(problem, false, options, deadline, on_iteration, on_bound, result);
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
