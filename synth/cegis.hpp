#pragma once
// The counterexample-guided loop of the Slapo PR: ask Z3 for any assignment
// cheaper than the best so far, score it with the C++ evaluator (which must
// agree with Z3's value of the cost term), tighten the bound, and stop when
// Z3 answers unsat: the best assignment is then proven optimal.
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "synth/problem.hpp"

namespace shardsynth::synth {

enum class CheckStatus { sat, unsat, unknown };

struct Iteration {
  int index = 0;                           // 0-based solver call number
  std::optional<int64_t> bound;            // asked for cost < bound; unset on the first call
  CheckStatus status = CheckStatus::unknown;  // Z3's answer
  Assignment assignment;                   // on sat: the model's assignment
  int64_t cost = 0;                        // on sat: its cost (evaluator and Z3 agree)
  double solver_ms = 0;                    // wall time of the check, milliseconds
};

// Which bound the loop asks for next (both end with Z3's unsat as the proof).
enum class SearchStrategy {
  descent,  // the PR's loop: anything cheaper than the best so far
  bisect,   // below the midpoint of [proven lower bound, best); unsat raises the lower bound
};

struct CegisOptions {
  SearchStrategy strategy = SearchStrategy::descent;  // bound schedule
  unsigned check_timeout_ms = 0;  // Z3 timeout per check; 0 = none
  int max_iterations = 0;         // stop after this many solver calls; 0 = unlimited
  bool reduce = true;             // solve the exactly reduced kernel (reduction.hpp) instead of the whole problem
};

struct CegisResult {
  Assignment best;              // best assignment found
  int64_t best_cost = 0;        // its cost
  bool proven_optimal = false;  // whether Z3 answered unsat below best_cost
  std::string stop_reason;      // "unsat", "unknown: <reason>", "iteration limit"
  std::vector<Iteration> iterations;  // every solver call, in order
  int64_t lower_bound = 0;      // proven: no assignment costs less (equals best_cost when proven optimal)
  int kernel_nodes = 0;         // nodes Z3 saw after reduction
  int kernel_edges = 0;         // edges Z3 saw after reduction
};

using IterationCallback = std::function<void(const Iteration&)>;

// Thrown when the evaluator and Z3 disagree on a model's cost: a bug in the
// encoding, never to be ignored.
class EvaluatorMismatch : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Runs the loop on the reduced kernel of `problem`; every model is expanded
// back to an assignment of `problem` and scored there, and that score must
// equal Z3's value of the kernel's cost term plus the reduction's constant.
// Iterations report assignments of `problem`. Throws ir::InputError when no assignment is feasible, and
// lets z3::exception through (the synth boundary translates it).
CegisResult run_cegis(const Problem& problem, const CegisOptions& options, const IterationCallback& on_iteration);

}  // namespace shardsynth::synth
