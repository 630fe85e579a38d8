#pragma once
// Exact search by variable elimination with Pareto labels: the cheapest plan
// of a Problem whose usage stays within the limit on a chosen set of memory
// rows, below a cutoff, or a proof that there is none.
//
// Nodes are eliminated one at a time (min-fill order). Eliminating node v
// combines everything that touches it (its costs, its edges to nodes still
// there, the factors made by earlier eliminations) into a new factor over
// its remaining neighbours. Where a plain min-sum elimination keeps one cost
// per entry of that factor, this keeps a list of labels: (cost, usage on
// each tracked row) of the eliminated part, one per plan of it that no other
// beats on cost and every row at once. A label is dropped when
//   - another of its entry has no higher cost and no higher usage on any
//     tracked row (every completion of it is matched by one of the other);
//   - its usage on a row, plus the least usage of that row's nodes it does
//     not cover yet, is over the limit;
//   - the LP's bound (lp_relaxation.hpp) plus the reduced-cost excess of its
//     part reaches the cutoff: every plan within the LP's binding rows
//     costs at least the LP bound plus its excess, so none through this
//     label is cheaper than the cutoff. This needs every row the LP's duals
//     lean on (LpRelaxation::binding_rows) among the tracked rows, which
//     also keeps the three rules consistent: a label that drops another
//     can only be dropped by the bound where the other would be too.
// With a granularity g > 1 every usage is rounded down to a multiple of g,
// which merges labels that differ by a few small tensors; the rows then
// hold for the rounded usages only, a relaxation (every plan within the
// limit keeps them), and the LP's bound and reduced costs are recomputed
// for the rounded usages from its duals, so the three rules stay exact for
// it. The result is exactly the cheapest plan below the cutoff that keeps
// the tracked rows (rounded), or none. It is the optimum of the whole Problem when it also
// keeps every other row (usage_rows); otherwise the caller adds a row it
// breaks and runs again (close_by_elimination, elimination_search.hpp).
// On graphs of small treewidth (transformers: 2) with a tight cutoff it is
// fast; each factor's table is bounded (`max_entries`) and all labels kept
// (`max_labels`), and past either it gives up.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct EliminationOptions {
  int64_t cutoff = kForbidden;  // only plans costing less than this (a cost of the problem) are looked for
  std::optional<std::chrono::steady_clock::time_point> deadline;  // gives up past it (unset = none)
  int64_t max_labels = 8'000'000;  // labels kept over all factors at most (outcome "label limit")
  int64_t max_entries = 8'000'000;  // entries of one factor's table at most (outcome "too wide")
  int64_t granularity = 1;          // usages are rounded down to a multiple of this, bytes (1: exact; see below)
};

struct LabelElimination {
  std::string outcome = "not run";  // "found", "none" (no plan below the cutoff keeps the rows), "time limit", "label limit", "too wide"
  Assignment plan;                  // with "found": the cheapest plan below the cutoff within the tracked rows
  int64_t cost = kForbidden;        // its cost in the problem (node and edge costs)
  int64_t labels = 0;               // labels kept over all factors
  int width = 0;                    // largest factor scope, in nodes
  double ms = 0;                    // wall time, milliseconds
};

// Runs the elimination on `problem` with the usage limit checked on `rows`
// (node sets, each ascending; none without a limit). `lp`, solved on the
// same problem, prunes by its reduced costs when given; then `rows` must
// hold every one of its binding_rows.
LabelElimination eliminate_with_labels(const Problem& problem, const std::vector<std::vector<int>>& rows,
                                  const LpRelaxation* lp, const EliminationOptions& options);

}  // namespace shardsynth::synth
