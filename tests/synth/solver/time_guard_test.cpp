// The time guard against a search that ignores its deadline: the caller gets
// the best reported plan and the highest published bound within the limit
// plus the grace, and nothing reaches its callback afterwards. A search that
// ends in time is passed through, and what it throws is rethrown.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "synth/solver/time_guard.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

Problem two_nodes() {
  return Problem{"two", {{"a", {3, 1}, {0, 0}, 0, 1}, {"b", {2, 5}, {0, 0}, 0, 1}}, {}, std::nullopt};
}

Iteration sat(Assignment x, int64_t cost, bool relaxed = false) {
  Iteration it;
  it.status = CheckStatus::sat;
  it.assignment = std::move(x);
  it.cost = cost;
  it.relaxed = relaxed;
  return it;
}

}  // namespace

TEST_CASE("time_guard_AbandonsASearchThatOverrunsItsDeadline") {
  CegisOptions options;
  options.time_limit_s = 0.2;
  // Stands in for a Z3 check that ignores its interrupt: it reports two
  // plans and a bound, then holds on well past the deadline.
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto late_steps = std::make_shared<std::atomic<int>>(0);
  int seen = 0;
  const auto start = Clock::now();
  const CegisResult r = run_within_time_limit(
      two_nodes(), options, [&](const Iteration&) { ++seen; },
      [release, late_steps](const Problem&, const CegisOptions&, const IterationCallback& on_iteration,
                            const BoundCallback& on_bound) {
        on_iteration(sat({0, 0}, 5));
        on_iteration(sat({1, 0}, 3));
        on_iteration(sat({1, 1}, 2, true));  // a relaxed step is not a plan
        on_bound(2);
        const auto until = Clock::now() + std::chrono::seconds(3);
        while (!*release && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        on_iteration(sat({1, 0}, 3));  // after the caller gave up: cut off
        ++*late_steps;
        return CegisResult{};
      });
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  *release = true;
  CHECK(waited < 0.2 + 2 * std::chrono::duration<double>(kAbandonGrace).count());
  CHECK(r.stop_reason == "time limit");
  CHECK(r.best == Assignment{1, 0});
  CHECK(r.best_cost == 3);
  CHECK(r.lower_bound == 2);
  CHECK(r.iterations.size() == 3);
  CHECK_FALSE(r.proven_optimal);
  CHECK(abandoned_searches() >= 1);
  // The abandoned worker ends on its own (its copy of the search, and with
  // it `release`, is gone then); its late step reaches no one.
  const auto until = Clock::now() + std::chrono::seconds(5);
  while ((*late_steps == 0 || release.use_count() > 1) && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(*late_steps == 1);
  CHECK(release.use_count() == 1);
  CHECK(seen == 3);
}

TEST_CASE("time_guard_PassesThroughASearchThatEndsInTime") {
  CegisOptions options;
  options.time_limit_s = 5.0;
  const CegisResult r = run_within_time_limit(
      two_nodes(), options, nullptr,
      [](const Problem& p, const CegisOptions&, const IterationCallback&, const BoundCallback&) {
        CegisResult result;
        result.best = {1, 0};
        result.best_cost = evaluate(p, result.best);
        result.proven_optimal = true;
        result.stop_reason = "unsat";
        return result;
      });
  CHECK(r.best_cost == 3);
  CHECK(r.proven_optimal);
  CHECK(r.stop_reason == "unsat");
  CHECK_THROWS_AS(run_within_time_limit(two_nodes(), options, nullptr,
                                        [](const Problem&, const CegisOptions&, const IterationCallback&,
                                           const BoundCallback&) -> CegisResult { throw std::runtime_error("z3 failed"); }),
                  std::runtime_error);
}

}  // namespace shardsynth::synth
