#pragma once
// Branch and bound on the LP relaxation (lp_relaxation.hpp), for the gap the
// LP leaves under a usage limit. A branch is the kernel with some choices
// made: a node fixed to one strategy, or one strategy of a node forbidden.
// Each branch's LP is solved; the branch is closed when its bound reaches the
// incumbent, or when its LP solution is integral (then it is a plan of the
// branch, and the cheapest one: a plan cheaper than the incumbent becomes
// the incumbent). Otherwise it splits on a fractional node v: first v fixed
// to its largest strategy s, then s forbidden at v, depth first. Which v is
// strong branching: of the few most fractional nodes (the least largest
// x[v][s]), the one whose two children's LPs raise the bound most (the
// product of the two rises); the children keep those LPs. The most
// fractional node alone makes trees that depend on which optimal vertex
// the LP returns (BENCHMARKS.md, issue 32). Every closed branch is closed by a bound from
// the LP's duals (weak duality, as reduced-cost fixing uses it), so when
// every branch is closed no plan of the kernel is cheaper than the
// incumbent; the exact loop then lets Z3 give the last word (exact_branching.cpp).
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// One choice on the way to a branch.
struct BranchChoice {
  int node = 0;       // kernel node index
  int strategy = 0;   // the strategy chosen or forbidden
  bool fixed = true;  // true: the node takes `strategy`; false: `strategy` is forbidden at the node
};

struct BranchingOptions {
  std::optional<std::chrono::steady_clock::time_point> deadline;  // stop (outcome "time limit") at this time (unset = none)
  int max_branches = 20'000;  // LPs solved at most (outcome "branch limit")
  int strong_candidates = 4;   // strong branching: the most fractional nodes whose two children's LPs are solved to choose the split (1: the most fractional node, no extra LPs)
};

struct Branching {
  std::string outcome = "not run";  // "closed" (no plan cheaper than the incumbent), "time limit", "branch limit", "lp failed"
  int64_t incumbent = kForbidden;   // the best kernel cost at the end (the one handed in, or a cheaper plan's)
  Assignment plan;                  // a kernel plan cheaper than the one handed in (empty when none was found)
  int64_t bound = 0;                // no kernel plan costs less: the least LP bound of the open branches (= incumbent when closed)
  int branches = 0;                 // LPs solved
  int closed_by_bound = 0;          // branches whose LP bound reached the incumbent (or whose LP was infeasible)
  int integral = 0;                 // branches whose LP solution was integral
  int deepest = 0;                  // most choices on one branch
  double ms = 0;                    // wall time, milliseconds
};

// The node to split on: the one whose largest allowed x is least (below 1 -
// 1e-6), ties to the lower index; -1 when the solution is integral.
int most_fractional_node(const Problem& problem, const LpRelaxation& lp);

// Searches `kernel` (with a usage limit) for a plan cheaper than `incumbent`
// (a kernel cost). `on_plan` is called with each cheaper plan found, in order.
Branching branch_on_lp(const Problem& kernel, int64_t incumbent, const BranchingOptions& options,
                       const std::function<void(const Assignment&, int64_t)>& on_plan = {});

}  // namespace shardsynth::synth
