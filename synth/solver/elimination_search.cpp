#include "synth/solver/elimination_search.hpp"

#include <algorithm>
#include <memory>

#include "synth/solver/pareto_elimination.hpp"

namespace shardsynth::synth {
namespace {

constexpr int kMaxRuns = 12;  // rows added one run at a time at most this often
constexpr size_t kStartRows = 8;  // the LP's binding rows are all tracked from the start when at most this many

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

namespace {

// One cutoff: the elimination below it, adding rows and refining the
// rounding until its plan keeps every row, or there is none, or it gives up.
struct CutoffRun {
  std::string outcome;  // "found" (plan within the limit), "none", or why it gave up
  LabelElimination last;     // the last elimination
};

class Prober {
 public:
  Prober(const Problem& kernel, const LpRelaxation& lp, EliminationSearch& search,
         std::optional<std::chrono::steady_clock::time_point> deadline)
      : kernel_(kernel), lp_(lp), search_(search) {
    // The rows the LP leans on, when they are few: then the LP itself
    // prices them and is not solved again. Otherwise one row to start
    // with, the one the LP prices highest: each row tracked multiplies the
    // labels, so rows are added only when a plan breaks them.
    if (kernel.usage_limit && !lp.binding_rows.empty()) {
      if (lp.binding_rows.size() <= kStartRows) {
        rows_ = lp.binding_rows;
      } else {
        const auto top = std::max_element(lp.binding_duals.begin(), lp.binding_duals.end()) - lp.binding_duals.begin();
        rows_.push_back(lp.binding_rows[top]);
      }
    }
    options_.deadline = deadline;
    // Rounding usages down to 1/4096 of the limit (a power of two) merges
    // labels that differ by small tensors; a plan that breaks a row only by
    // what was rounded away makes it 16 times finer, down to exact.
    while (kernel.usage_limit && options_.granularity * 2 <= *kernel.usage_limit / 4096) options_.granularity *= 2;
  }

  void resume(const EliminationSearch& before) {
    if (!before.tracked.empty()) rows_ = before.tracked;
    if (before.lp && before.lp->has_duals()) {  // the LP it solved last, not solved again
      tracked_ = before.lp;
      tracked_rows_ = before.lp_rows;
    }
    options_.granularity = std::min(options_.granularity, before.granularity);
  }

  CutoffRun below(int64_t cutoff) {
    options_.cutoff = cutoff;
    for (;;) {
      if (search_.runs >= kMaxRuns) return {"row limit", {}};
      if (!tracked_ || tracked_rows_ != rows_) resolve_lp();
      LabelElimination run = eliminate_with_labels(kernel_, rows_, tracked_->has_duals() ? &*tracked_ : nullptr, options_);
      ++search_.runs;
      search_.labels += run.labels;
      search_.width = std::max(search_.width, run.width);
      search_.rows = static_cast<int>(rows_.size());
      search_.tracked = rows_;
      search_.granularity = options_.granularity;
      if (run.outcome != "found") return {run.outcome, std::move(run)};
      if (within_usage_limit(kernel_, run.plan)) return {"found", std::move(run)};
      std::vector<int> broken = most_broken_row(kernel_, run.plan, rows_);
      if (broken.empty()) {
        options_.granularity = std::max<int64_t>(1, options_.granularity / 16);
      } else {
        rows_.push_back(std::move(broken));
      }
    }
  }

 private:
  // The LP over the tracked rows alone: its duals price only those. When
  // every row the whole LP leans on is tracked, that LP is already one.
  void resolve_lp() {
    tracked_rows_ = rows_;
    if (std::all_of(lp_.binding_rows.begin(), lp_.binding_rows.end(), [&](const std::vector<int>& row) {
          return std::find(rows_.begin(), rows_.end(), row) != rows_.end();
        })) {
      tracked_ = std::make_shared<const LpRelaxation>(lp_);
      return;
    }
    LpOptions lp_options;
    lp_options.deadline = options_.deadline;
    lp_options.rows = rows_;
    tracked_ = std::make_shared<const LpRelaxation>(solve_lp_relaxation(kernel_, lp_options));
    search_.lp = tracked_;
    search_.lp_rows = rows_;
  }

  const Problem& kernel_;
  const LpRelaxation& lp_;
  EliminationSearch& search_;
  EliminationOptions options_;
  std::vector<std::vector<int>> rows_;          // the rows tracked
  std::vector<std::vector<int>> tracked_rows_;  // the rows tracked_ was solved with
  std::shared_ptr<const LpRelaxation> tracked_;  // the LP over them
};

// Milliseconds to `deadline` (unset: none).
std::optional<double> ms_left(std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (!deadline) return std::nullopt;
  return std::chrono::duration<double, std::milli>(*deadline - std::chrono::steady_clock::now()).count();
}

}  // namespace

EliminationSearch close_by_elimination(const Problem& kernel, const LpRelaxation& lp, int64_t incumbent,
                                       std::optional<std::chrono::steady_clock::time_point> deadline,
                                       const EliminationSearch* before) {
  const auto start = std::chrono::steady_clock::now();
  EliminationSearch search;
  Prober prober(kernel, lp, search, deadline);
  const int64_t proven = before ? before->bound : 0;
  if (before) prober.resume(*before);
  // Cutoffs climb from just above the LP's bound to the incumbent, each as
  // far as the labels' growth and the time left allow (cutoff_schedule.hpp);
  // each cutoff with no plan below it is a proven bound.
  const int64_t base = std::max<int64_t>({0, lp.bound, proven});
  CutoffSchedule schedule(base, incumbent, before ? before->climbed : std::vector<CutoffCost>{});
  for (;;) {
    const std::optional<int64_t> next = schedule.next(ms_left(deadline));
    if (!next) {
      search.outcome = "time limit";  // the next step would not end in time: the time goes to what follows
      break;
    }
    const int64_t cutoff = *next;
    const auto started = std::chrono::steady_clock::now();
    CutoffRun run = prober.below(cutoff);
    search.probes.push_back({cutoff, run.outcome,
                             std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count()});
    if (run.outcome == "found") {
      search.plan = std::move(run.last.plan);
      search.cost = run.last.cost;
      search.bound = search.cost;
      search.outcome = "optimal";
      break;
    }
    if (run.outcome != "none") {
      search.outcome = run.outcome;
      break;
    }
    search.bound = cutoff;
    schedule.climbed({cutoff, run.last.labels, search.rows, run.last.ms});
    if (cutoff >= incumbent) {
      search.outcome = "optimal";
      break;
    }
  }
  search.climbed = schedule.done();
  search.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return search;
}

}  // namespace shardsynth::synth
