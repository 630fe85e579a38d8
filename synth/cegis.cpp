#include "synth/cegis.hpp"

#include <chrono>

#include <z3++.h>

#include "ir/error.hpp"
#include "synth/reduction.hpp"
#include "synth/z3_encoding.hpp"

namespace shardsynth::synth {

CegisResult run_cegis(const Problem& problem, const CegisOptions& options, const IterationCallback& on_iteration) {
  validate(problem);
  const Reduced reduced = options.reduce ? reduce(problem) : identity_reduction(problem);
  if (reduced.constant >= kForbidden) throw ir::InputError("problem '" + problem.name + "' has no feasible assignment");
  z3::context ctx;
  Z3Encoding encoding(ctx, reduced.kernel);
  z3::solver solver(ctx);
  z3::params params(ctx);
  params.set("random_seed", 0u);
  if (options.check_timeout_ms > 0) params.set("timeout", options.check_timeout_ms);
  solver.set(params);
  solver.add(encoding.constraints());

  CegisResult result;
  result.kernel_nodes = static_cast<int>(reduced.kernel.nodes.size());
  result.kernel_edges = static_cast<int>(reduced.kernel.edges.size());
  result.lower_bound = reduced.constant;  // kernel costs are non-negative
  std::optional<int64_t> best;            // best cost so far (original problem)
  while (!result.proven_optimal) {
    if (options.max_iterations > 0 && static_cast<int>(result.iterations.size()) >= options.max_iterations) {
      result.stop_reason = "iteration limit";
      break;
    }
    Iteration it;
    it.index = static_cast<int>(result.iterations.size());
    if (best) {
      // descent asks for anything cheaper than best; bisect for the lower half of [lower bound, best).
      it.bound = options.strategy == SearchStrategy::bisect
                     ? result.lower_bound + (*best - result.lower_bound + 1) / 2
                     : *best;
    }
    // A probe below best is temporary; the bound `cost < best` holds for good
    // (added when best was found), so descent never needs push/pop, which
    // would cost Z3 its non-incremental preprocessing.
    const bool probe = it.bound && it.bound != best;
    if (probe) {
      solver.push();
      solver.add(encoding.cost() < ctx.int_val(*it.bound - reduced.constant));
    }
    const auto start = std::chrono::steady_clock::now();
    const z3::check_result answer = solver.check();
    it.solver_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (answer == z3::sat) {
      it.status = CheckStatus::sat;
      const z3::model model = solver.get_model();
      it.assignment = expand(reduced, encoding.decode(model));
      it.cost = evaluate(problem, it.assignment);
      const int64_t z3_cost = encoding.cost_value(model) + reduced.constant;
      if (it.cost != z3_cost || it.cost >= kForbidden || (it.bound && it.cost >= *it.bound)) {
        throw EvaluatorMismatch("iteration " + std::to_string(it.index) + ": the evaluator scores the model " +
                                std::to_string(it.cost) + " but Z3's cost term is " + std::to_string(z3_cost) +
                                (it.bound ? " (bound " + std::to_string(*it.bound) + ")" : ""));
      }
    } else {
      it.status = answer == z3::unsat ? CheckStatus::unsat : CheckStatus::unknown;
    }
    if (probe) solver.pop();
    if (it.status == CheckStatus::sat) {
      result.best = it.assignment;
      result.best_cost = it.cost;
      best = it.cost;
      solver.add(encoding.cost() < ctx.int_val(it.cost - reduced.constant));
    } else if (it.status == CheckStatus::unsat) {
      if (!it.bound) throw ir::InputError("problem '" + problem.name + "' has no feasible assignment");
      // Nothing costs less than the bound: a proven lower bound, kept as a lemma.
      result.lower_bound = *it.bound;
      if (it.bound == best) {
        result.proven_optimal = true;
        result.stop_reason = "unsat";
      } else {
        solver.add(encoding.cost() >= ctx.int_val(*it.bound - reduced.constant));
      }
    }
    result.iterations.push_back(it);
    if (on_iteration) on_iteration(result.iterations.back());
    if (it.status == CheckStatus::unknown) {
      result.stop_reason = "unknown: " + solver.reason_unknown();
      break;
    }
  }
  return result;
}

}  // namespace shardsynth::synth
