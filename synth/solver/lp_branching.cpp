#include "synth/solver/lp_branching.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "synth/solver/reduced_cost_fixing.hpp"

namespace shardsynth::synth {
namespace {

constexpr double kIntegral = 1e-6;  // x within this of 1 counts as chosen

using Clock = std::chrono::steady_clock;

// An open branch: the kernel with its choices made (and what its parent's
// reduced costs fixed), and its parent's LP bound.
struct OpenBranch {
  Problem problem;           // the kernel, with what the branch excludes forbidden
  int64_t parent_bound = 0;  // no plan of the branch costs less (its parent's LP bound)
  int depth = 0;             // choices made
  std::optional<LpRelaxation> lp;  // its LP, when solved already (by the strong branching of its parent)
};

void choose(Problem& problem, const BranchChoice& c) {
  std::vector<int64_t>& costs = problem.nodes[static_cast<size_t>(c.node)].costs;
  for (int s = 0; s < static_cast<int>(costs.size()); ++s) {
    if (c.fixed ? s != c.strategy : s == c.strategy) costs[static_cast<size_t>(s)] = kForbidden;
  }
}

// The LP's plan: each node's largest allowed x (the solution is integral).
Assignment lp_plan(const Problem& problem, const LpRelaxation& lp) {
  Assignment plan(problem.nodes.size(), 0);
  for (size_t v = 0; v < problem.nodes.size(); ++v) {
    double largest = -1;
    for (size_t s = 0; s < lp.values[v].size(); ++s) {
      if (problem.nodes[v].costs[s] < kForbidden && lp.values[v][s] > largest) {
        largest = lp.values[v][s];
        plan[v] = static_cast<int>(s);
      }
    }
  }
  return plan;
}

int largest_strategy(const Problem& problem, const LpRelaxation& lp, int v) {
  return lp_plan(problem, lp)[static_cast<size_t>(v)];
}

// The fractional nodes, most fractional first (ties to the lower index), at most `count`.
std::vector<int> fractional_nodes(const Problem& problem, const LpRelaxation& lp, int count) {
  std::vector<std::pair<double, int>> order;
  for (size_t v = 0; v < problem.nodes.size(); ++v) {
    double largest = 0;
    for (size_t s = 0; s < lp.values[v].size(); ++s) {
      if (problem.nodes[v].costs[s] < kForbidden) largest = std::max(largest, lp.values[v][s]);
    }
    if (largest < 1 - kIntegral) order.emplace_back(largest, static_cast<int>(v));
  }
  std::sort(order.begin(), order.end());
  std::vector<int> nodes;
  for (size_t i = 0; i < order.size() && static_cast<int>(nodes.size()) < count; ++i) nodes.push_back(order[i].second);
  return nodes;
}

// How far a child's LP raises the parent's bound (capped at the incumbent;
// an infeasible child counts as reaching it).
double gain(const LpRelaxation& child, int64_t parent_bound, int64_t incumbent) {
  if (child.outcome == "infeasible") return static_cast<double>(incumbent - parent_bound);
  if (child.outcome != "optimal" || !child.has_duals()) return 0;
  return static_cast<double>(std::min(child.bound, incumbent) - parent_bound);
}

// A split of one node: its two children, their LPs solved.
struct Split {
  OpenBranch fix;     // the node takes its largest strategy
  OpenBranch forbid;  // that strategy is forbidden at the node
  double score = -1;  // product of the children's gains (each at least 1)
};

Split split_on(const OpenBranch& parent, int64_t parent_bound, const LpRelaxation& lp, int v, bool solve,
               const LpOptions& lp_options, int64_t incumbent) {
  const int s = largest_strategy(parent.problem, lp, v);
  Split split{OpenBranch{parent.problem, parent_bound, parent.depth + 1, std::nullopt},
              OpenBranch{parent.problem, parent_bound, parent.depth + 1, std::nullopt}};
  choose(split.fix.problem, BranchChoice{v, s, true});
  choose(split.forbid.problem, BranchChoice{v, s, false});
  if (!solve) return split;
  split.fix.lp = solve_lp_relaxation(split.fix.problem, lp_options);
  split.forbid.lp = solve_lp_relaxation(split.forbid.problem, lp_options);
  split.score = std::max(1.0, gain(*split.fix.lp, parent_bound, incumbent)) *
                std::max(1.0, gain(*split.forbid.lp, parent_bound, incumbent));
  return split;
}

// The split of `branch`: on its most fractional node `v`; with strong
// branching, on the candidate (of the most fractional ones) whose children's
// LPs raise the bound most (the product of the two gains), its children
// keeping their solved LPs. Without time or LPs left for it, on `v`.
Split choose_split(const OpenBranch& branch, const LpRelaxation& lp, int v, const LpOptions& lp_options,
                   const BranchingOptions& options, Branching& result) {
  const std::vector<int> candidates = fractional_nodes(branch.problem, lp, options.strong_candidates);
  const bool strong = candidates.size() > 1 &&
                      result.branches + 2 * static_cast<int>(candidates.size()) <= options.max_branches;
  if (!strong) return split_on(branch, lp.bound, lp, v, false, lp_options, result.incumbent);
  Split best;
  for (int c : candidates) {
    if (options.deadline && Clock::now() >= *options.deadline) break;
    Split split = split_on(branch, lp.bound, lp, c, true, lp_options, result.incumbent);
    result.branches += 2;
    if (split.score > best.score) best = std::move(split);
  }
  if (best.score < 0) return split_on(branch, lp.bound, lp, v, false, lp_options, result.incumbent);
  return best;
}

}  // namespace

int most_fractional_node(const Problem& problem, const LpRelaxation& lp) {
  int chosen = -1;
  double least = 1 - kIntegral;
  for (size_t v = 0; v < problem.nodes.size(); ++v) {
    double largest = 0;
    for (size_t s = 0; s < lp.values[v].size(); ++s) {
      if (problem.nodes[v].costs[s] < kForbidden) largest = std::max(largest, lp.values[v][s]);
    }
    if (largest < least) {
      least = largest;
      chosen = static_cast<int>(v);
    }
  }
  return chosen;
}

Branching branch_on_lp(const Problem& kernel, int64_t incumbent, const BranchingOptions& options,
                       const std::function<void(const Assignment&, int64_t)>& on_plan) {
  const auto start = Clock::now();
  Branching result;
  result.incumbent = incumbent;
  std::vector<OpenBranch> open;
  open.push_back(OpenBranch{kernel, 0, 0});
  LpOptions lp_options;
  lp_options.deadline = options.deadline;
  while (!open.empty()) {
    if (options.deadline && Clock::now() >= *options.deadline) {
      result.outcome = "time limit";
      break;
    }
    if (result.branches >= options.max_branches) {
      result.outcome = "branch limit";
      break;
    }
    OpenBranch branch = std::move(open.back());
    open.pop_back();
    if (branch.parent_bound >= result.incumbent) {  // a cheaper plan found since it was opened
      ++result.closed_by_bound;
      continue;
    }
    Problem& problem = branch.problem;
    if (!branch.lp) {
      branch.lp = solve_lp_relaxation(problem, lp_options);
      ++result.branches;
    }
    const LpRelaxation& lp = *branch.lp;
    result.deepest = std::max(result.deepest, branch.depth);
    if (lp.outcome == "infeasible" || (lp.has_duals() && lp.bound >= result.incumbent)) {
      ++result.closed_by_bound;
      continue;
    }
    if (lp.outcome != "optimal") {  // its solution may break a memory row: the branch stays undecided
      result.outcome = lp.outcome == "time limit" ? "time limit" : "lp failed";
      open.push_back(std::move(branch));
      break;
    }
    const int v = most_fractional_node(problem, lp);
    if (v < 0) {  // integral: the branch's cheapest plan
      ++result.integral;
      const Assignment plan = lp_plan(problem, lp);
      const int64_t cost = evaluate(kernel, plan);  // the kernel's: the branch only forbids
      if (cost < result.incumbent) {
        result.incumbent = cost;
        result.plan = plan;
        if (on_plan) on_plan(plan, cost);
      }
      if (lp.bound >= result.incumbent) continue;
      // The duals' bound lies a rounding error below the plan: the branch is
      // not closed by them. Keep it open and stop (rare; the proof is left to Z3).
      result.outcome = "lp failed";
      open.push_back(std::move(branch));
      break;
    }
    fix_by_reduced_cost(problem, lp, result.incumbent);  // nothing cheaper than the incumbent is lost
    Split split = choose_split(branch, lp, v, lp_options, options, result);
    open.push_back(std::move(split.forbid));
    open.push_back(std::move(split.fix));  // explored first: the LP's own choice
  }
  if (open.empty()) result.outcome = "closed";
  result.bound = result.incumbent;
  for (const OpenBranch& b : open) result.bound = std::min(result.bound, b.parent_bound);
  result.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return result;
}

}  // namespace shardsynth::synth
