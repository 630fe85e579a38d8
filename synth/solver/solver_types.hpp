#pragma once
// The solver's shared vocabulary: the options a search takes, the steps it
// reports (Iteration), and the result it returns. Every solver file that
// needs these includes this header, never the driver (cegis.hpp), so the
// solver's files form no include circle.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "synth/solver/problem.hpp"
#include "synth/solver/solver_error.hpp"

namespace shardsynth::synth {

enum class CheckStatus { sat, unsat, unknown };

struct Iteration {
  int index = 0;                           // 0-based step number (solver calls and the decoded incumbent)
  std::optional<int64_t> bound;            // asked for cost < bound; unset on an unbounded call
  CheckStatus status = CheckStatus::unknown;  // Z3's answer (sat for the decoded incumbent)
  Assignment assignment;                   // on sat: the assignment found
  int64_t cost = 0;                        // on sat: its cost (evaluator and Z3 agree)
  double solver_ms = 0;                    // wall time of the check (or of the decoding), milliseconds
  double prepare_ms = 0;                   // wall time spent before the check on this step (reducing, bounding, pruning, encoding), milliseconds
  std::string source = "z3";               // "z3", "z3-optimize", "dual" (decoded from the lower-bound pass), "lp" (rounded from the LP relaxation), "elimination" (the Pareto elimination: unsat below a cutoff, or sat with the optimum), "branch" (branch and bound on the LP: sat with a cheaper plan, or unsat below the best cost), "network" (the cost network's branch and bound on the folded problem: sat with a cheaper plan, or unsat below the best cost), "search" (the anytime search's priced descent and repair), "z3-region" (Z3 on a region of the anytime search's kernel), or a start plan's own source (CegisOptions::starts, e.g. "plan:megatron")
  bool relaxed = false;                    // scored without the usage limit (the relaxation phase)
};

// Which bound the loop asks for next (both end with Z3's unsat as the proof).
enum class SearchStrategy {
  descent,   // the PR's loop: anything cheaper than the best so far
  bisect,    // below the midpoint of [proven lower bound, best); unsat raises the lower bound
  optimize,  // z3::optimize minimizes the cost term in one call (a baseline); one check below it proves it
};

// How a temporary bound (a bisection probe) is added and withdrawn.
enum class ProbeMode {
  assumptions,  // a fresh literal implies the bound; checked under it, then asserted false
  push_pop,     // solver scopes
};

// How the Z3 problem is written (z3_encoding.hpp).
enum class EncodingKind {
  if_chains,  // one Int per node, costs as If-chains over it
  one_hot,    // one Bool per strategy, exactly one per node, costs as sums of If(b, cost, 0)
  pseudo_boolean,  // purely Boolean: one Bool per strategy and per costly pair, the cost bound one pseudo-Boolean row
};

// When the anytime search (anytime.hpp) runs before the exact loop.
// When the exact loop runs the branch and bound on the LP (lp_branching.hpp).
enum class BranchingMode {
  automatic,  // when a bisection probe runs out of Z3's deterministic resource budget (CegisOptions::branch_after_rlimit)
  always,     // right after the LP step, before the elimination (--branching)
  never,      // not at all (--no-branching)
};

enum class AnytimeMode {
  automatic,  // with a usage limit, when the reductions and the lower-bound pass are on (not the --no-reduce / --no-dual baselines)
  always,     // on every problem
  never,      // the exact loop alone
};

// Problems with more nodes than this are left to the anytime search alone:
// the exact loop's reductions and Z3 encoding check memory on every set of
// co-live nodes, which grows with nodes times time steps.
inline constexpr int kExactLoopMaxNodes = 4000;

// A plan the search starts from (e.g. an expert family's, synth/family_starts.hpp).
struct StartPlan {
  Assignment assignment;  // of the problem handed to run_cegis
  std::string source;     // its step's source in the trace, e.g. "plan:megatron"
  double found_ms = 0;    // wall time spent finding it before the search (its step's solver_ms), milliseconds
};

// Asked for the start plans with the search's deadline (unset = none);
// returns them in order.
using StartProvider =
    std::function<std::vector<StartPlan>(std::optional<std::chrono::steady_clock::time_point> deadline)>;

struct CegisOptions {
  SearchStrategy strategy = SearchStrategy::bisect;  // bound schedule (bisect: measured fastest, BENCHMARKS.md)
  unsigned check_timeout_ms = 0;  // Z3 timeout per check; 0 = none
  int max_iterations = 0;         // stop after this many solver calls; 0 = unlimited
  bool reduce = true;             // solve the exactly reduced kernel (reduction.hpp) instead of the whole problem
  bool dual_bound = true;         // reparameterize, start from a decoded incumbent, prune at the gap (dual_bound.hpp)
  bool elimination = true;        // with lp_bound: the Pareto elimination closes the gap under a usage limit (elimination_search.hpp)
  BranchingMode lp_branching = BranchingMode::automatic;  // with lp_bound, under a usage limit: when to branch and bound on the LP (lp_branching.hpp; BENCHMARKS.md, issue 32)
  long network_work = 4'000'000'000;  // under a usage limit: values the cost network's branch and bound on the folded problem may scan after the LP step, a sixteenth of it before the anytime search (network_search.hpp; exact_network.cpp); about 0.5-1e9 per second; 0 = no network step
  uint64_t branch_after_rlimit = 10'000'000;  // automatic branching: Z3's resource units (its deterministic "rlimit") one bisection probe may spend before the branching takes over
  bool lp_bound = true;           // with dual_bound: the LP relaxation's bound, rounded plan and reduced-cost fixing (lp_tightening.hpp)
  bool relax_usage = false;       // with a usage limit, first solve without it and keep its optimum if it fits
  ProbeMode probes = ProbeMode::assumptions;       // how bisection probes are withdrawn
  EncodingKind encoding = EncodingKind::pseudo_boolean;  // the Z3 encoding (measured fastest, BENCHMARKS.md)
  std::optional<double> time_limit_s;  // wall-clock limit for the whole search, seconds from its start; unset = none
  std::optional<std::chrono::steady_clock::time_point> deadline;  // absolute end of the search (e.g. the process's limit); the earlier of the two holds
  AnytimeMode anytime = AnytimeMode::automatic;  // the anytime search first (folding, Lagrangian search, Z3 on regions)
  int threads = 1;                     // anytime searches run side by side, one thread each
  uint64_t seed = 1;                   // the anytime search's first seed
  StartProvider starts;                // plans to start from, asked for once where the anytime search is about to run (not where the exact loop alone decides); empty = none
};

struct ProblemSize {
  int nodes = 0;           // nodes
  int edges = 0;           // edges
  int64_t strategies = 0;  // allowed (not forbidden) strategies over all nodes
};
ProblemSize size_of(const Problem& problem);

struct CegisResult {
  Assignment best;              // best assignment found (empty when none)
  int64_t best_cost = 0;        // its cost
  bool proven_optimal = false;  // whether Z3 answered unsat below best_cost
  std::string stop_reason;      // "unsat", "unknown: <reason>", "iteration limit", "time limit", "stalled" (the anytime search stopped improving on a problem too large for the exact loop)
  std::vector<Iteration> iterations;  // every step, in order
  int64_t lower_bound = 0;      // proven: no assignment costs less (equals best_cost when proven optimal)
  int64_t dual_bound = 0;       // the reparameterization's lower bound (0 without it)
  ProblemSize original;         // the problem handed in
  ProblemSize reduced;          // after the exact reductions
  ProblemSize pruned;           // what Z3 saw last: after pruning at the gap and reducing again
  int kernel_nodes = 0;         // = reduced.nodes
  int kernel_edges = 0;         // = reduced.edges

  // (best - lower bound) / best; 0 when proven optimal.
  double relative_gap() const;
};

// When a search started at `start` must end: the earlier of
// options.deadline and start + options.time_limit_s (unset when neither is).
std::optional<std::chrono::steady_clock::time_point> search_deadline(const CegisOptions& options,
                                                                     std::chrono::steady_clock::time_point start);

using IterationCallback = std::function<void(const Iteration&)>;

// Called with each rise of the proven lower bound on the problem handed in.
using BoundCallback = std::function<void(int64_t)>;

// Thrown when the evaluator and Z3 disagree on a model's cost: a bug in the
// encoding, never to be ignored.
class EvaluatorMismatch : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace shardsynth::synth
