#include "synth/solver/elimination_search.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "synth/solver/pareto_elimination.hpp"

namespace shardsynth::synth {
namespace {

constexpr int kMaxRuns = 12;  // rows added one run at a time at most this often

// The row of `kernel` that `plan` exceeds most among those `rows` lacks
// (empty when it exceeds none of them).
std::vector<int> most_broken_row(const Problem& kernel, const Assignment& plan,
                                 const std::vector<std::vector<int>>& rows) {
  std::vector<int> broken;
  int64_t most = *kernel.usage_limit;
  for (auto& row : usage_rows(kernel)) {
    int64_t used = 0;
    for (int v : row) used += kernel.nodes[v].usages[plan[v]];
    if (used > most && std::find(rows.begin(), rows.end(), row) == rows.end()) {
      most = used;
      broken = std::move(row);
    }
  }
  return broken;
}

}  // namespace

EliminationSearch close_by_elimination(const Problem& kernel, const LpRelaxation& lp, int64_t incumbent,
                                       std::optional<std::chrono::steady_clock::time_point> deadline) {
  const auto start = std::chrono::steady_clock::now();
  EliminationSearch search;
  // One row to start with, the one the LP prices highest: each row tracked
  // multiplies the labels, so rows are added only when a plan breaks them.
  std::vector<std::vector<int>> rows;
  if (kernel.usage_limit && !lp.binding_rows.empty()) {
    const auto top = std::max_element(lp.binding_duals.begin(), lp.binding_duals.end()) - lp.binding_duals.begin();
    rows.push_back(lp.binding_rows[top]);
  }
  EliminationOptions options;
  options.cutoff = incumbent;
  options.deadline = deadline;
  // Rounding usages down to 1/4096 of the limit (a power of two) merges
  // labels that differ by small tensors; a plan that breaks a row only by
  // what was rounded away makes it 16 times finer, down to exact.
  options.granularity = 1;
  while (kernel.usage_limit && options.granularity * 2 <= *kernel.usage_limit / 4096) options.granularity *= 2;
  for (;;) {
    if (search.runs >= kMaxRuns) {
      search.outcome = "row limit";
      break;
    }
    // The LP over the tracked rows alone: its duals price only those.
    LpOptions lp_options;
    lp_options.deadline = deadline;
    lp_options.rows = rows;
    const LpRelaxation tracked = rows == lp.binding_rows ? lp : solve_lp_relaxation(kernel, lp_options);
    const Elimination run = eliminate_with_labels(kernel, rows, tracked.has_duals() ? &tracked : nullptr, options);
    ++search.runs;
    search.labels += run.labels;
    search.width = std::max(search.width, run.width);
    search.rows = static_cast<int>(rows.size());
    if (std::getenv("SHARDSYNTH_ELIM_DEBUG")) {
      std::fprintf(stderr, "[elim] run %d rows %zu lp %.1f g %lld outcome %s cost %lld labels %lld width %d ms %.1f\n",
                   search.runs, rows.size(), tracked.bound_exact, static_cast<long long>(options.granularity),
                   run.outcome.c_str(), static_cast<long long>(run.cost), static_cast<long long>(run.labels), run.width,
                   run.ms);
    }
    if (run.outcome == "none") {
      search.outcome = "optimal";
      break;
    }
    if (run.outcome != "found") {
      search.outcome = run.outcome;
      break;
    }
    if (within_usage_limit(kernel, run.plan)) {
      search.plan = run.plan;
      search.cost = run.cost;
      search.outcome = "optimal";
      break;
    }
    std::vector<int> broken = most_broken_row(kernel, run.plan, rows);
    if (broken.empty()) {
      options.granularity = std::max<int64_t>(1, options.granularity / 16);
    } else {
      rows.push_back(std::move(broken));
    }
  }
  search.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return search;
}

}  // namespace shardsynth::synth
