#include "synth/solver/network_search.hpp"

#include <algorithm>

#include "synth/solver/cost_network.hpp"
#include "synth/solver/interrupt.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// Search nodes between two looks at the clock.
constexpr long kClockEvery = 64;

// The rows worth Lagrangian steps: those with a multiplier, and those the
// members' cheapest values overflow after the root's propagation.
std::vector<int> overflowing_rows(const CostNetwork& net) {
  std::vector<int> rows;
  for (int r = 0; r < static_cast<int>(net.rows().size()); ++r) {
    const KnapsackRow& row = net.rows()[r];
    int64_t sum = 0;
    for (std::size_t m = 0; m < row.vars.size(); ++m) {
      sum += row.weights[m][net.cheapest(row.vars[m])];
    }
    if (sum > row.capacity || net.multiplier(r) > 0) rows.push_back(r);
  }
  return rows;
}

class Search {
 public:
  Search(const NetworkInput& input, int64_t incumbent, const Assignment& hint, const NetworkSearchOptions& options,
         const std::function<void(const Assignment&, int64_t)>& on_plan)
      : input_(input), offset_(input.offset), net_(input.network, input.rows, input.multipliers, relative(incumbent)), hint_(hint),
        options_(options), on_plan_(on_plan), weight_(input.network.nodes.size(), 1) {
    out_.incumbent = incumbent;
    net_.set_deadline(options.deadline);
    per_score_ = static_cast<long>(input.network.nodes.size() + input.network.edges.size());
    for (const auto& row : input.rows) per_score_ += static_cast<long>(row.vars.size());
  }

  NetworkSearch run() {
    const auto start = Clock::now();
    if (net_.propagate()) {
      const auto rows = overflowing_rows(net_);
      out_.priced_rows = static_cast<int>(rows.size());
      net_.price_rows(rows);
      if (net_.propagate()) {
        out_.root_bound = offset_ + net_.floor();
        dfs();
      } else {
        out_.root_bound = out_.incumbent;
      }
    } else {
      out_.root_bound = out_.incumbent;
    }
    if (out_.outcome == "not run") out_.outcome = "closed";
    out_.work = net_.work() + scored_ * per_score_;
    out_.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return out_;
  }

 private:
  bool out_of_budget() {
    if (out_.outcome != "not run") return true;
    out_.work = net_.work() + scored_ * per_score_;
    if ((options_.max_work > 0 && out_.work >= options_.max_work) ||
        (options_.stop_at_work && options_.stop_at_work(out_.work))) {
      out_.outcome = "work limit";
    } else if (net_.interrupted()) {
      out_.outcome = "time limit";
    } else if (out_.nodes % kClockEvery == 0 &&
               ((options_.deadline && Clock::now() >= *options_.deadline) || interrupt_requested())) {
      out_.outcome = "time limit";
    }
    return out_.outcome != "not run";
  }

  // dom/wdeg: the fewest live values per failure weight; -1 when every
  // variable has one value.
  int choose_variable() const {
    int best = -1;
    for (int i = 0; i < net_.variables(); ++i) {
      const int live = net_.live_count(i);
      if (live < 2) continue;
      if (best < 0 || static_cast<int64_t>(live) * weight_[best] < static_cast<int64_t>(net_.live_count(best)) * weight_[i]) {
        best = i;
      }
    }
    return best;
  }

  int choose_value(int var) const {
    if (!hint_.empty() && net_.live(var, hint_[var])) return hint_[var];
    return net_.cheapest(var);
  }

  void improve(const Assignment& plan, int64_t cost) {
    out_.incumbent = cost;
    net_.lower_cutoff(relative(cost));
    hint_ = plan;
    out_.plan = plan;
    if (on_plan_) on_plan_(plan, cost);
  }

  // The plan of each variable's preferred value (the hint's when it is
  // among the cheapest, else the cheapest): scored on the kernel, it may be
  // cheaper than the incumbent; when it costs no more than the floor, no
  // plan of this subproblem is cheaper, and the subproblem is done (so is
  // a leaf: its one plan was just scored). Otherwise `conflict` is where
  // that plan pays (conflict_variable).
  bool solved_by_supports(int* conflict) {
    Assignment plan(net_.variables());
    for (int i = 0; i < net_.variables(); ++i) {
      const int best = net_.cheapest(i);
      const bool hinted = !hint_.empty() && net_.live(i, hint_[i]) && net_.unary(i, hint_[i]) == net_.unary(i, best);
      plan[i] = hinted ? hint_[i] : best;
    }
    const int64_t cost = input_.score(plan);
    ++scored_;
    if (cost < out_.incumbent) improve(plan, cost);
    if (cost <= offset_ + net_.floor()) return true;
    *conflict = conflict_variable(plan);
    return false;
  }

  // The variable to branch on where the preferred plan pays: an end of the
  // edge with the largest residual cost under it, else a member of the row
  // it overflows most with the most weight above its lightest value; -1
  // when it pays neither (the gap is the rows' penalties).
  int conflict_variable(const Assignment& plan) const {
    int best = -1;
    int64_t worst = 0;
    for (int e = 0; e < net_.edge_count(); ++e) {
      const int a = net_.edge_from(e), b = net_.edge_to(e);
      const int64_t r = net_.residual(e, plan[a], plan[b]);
      if (r <= worst) continue;
      const int pick = net_.live_count(a) > 1 ? a : (net_.live_count(b) > 1 ? b : -1);
      if (pick < 0) continue;
      worst = r;
      best = pick;
    }
    if (best >= 0) return best;
    int64_t over = 0;
    for (int r = 0; r < static_cast<int>(net_.rows().size()); ++r) {
      const KnapsackRow& row = net_.rows()[r];
      int64_t sum = -row.capacity;
      for (std::size_t m = 0; m < row.vars.size(); ++m) sum += row.weights[m][plan[row.vars[m]]];
      if (sum <= over) continue;
      int pick = -1;
      int64_t spare = 0;
      for (std::size_t m = 0; m < row.vars.size(); ++m) {
        const int i = row.vars[m];
        if (net_.live_count(i) < 2) continue;
        const int64_t above = row.weights[m][plan[i]] - net_.lightest_weight(r, m);
        if (above > spare) {
          spare = above;
          pick = i;
        }
      }
      if (pick >= 0) {
        over = sum;
        best = pick;
      }
    }
    return best;
  }

  void dfs() {
    ++out_.nodes;
    if (out_of_budget()) return;
    int conflict = -1;
    if (solved_by_supports(&conflict)) return;
    const int var = conflict >= 0 ? conflict : choose_variable();
    if (var < 0) return;  // a leaf: solved_by_supports scored its plan
    const int value = choose_value(var);
    const std::size_t mark = net_.mark();
    if (net_.assign(var, value)) {
      dfs();
    } else {
      ++weight_[var];
    }
    net_.restore(mark);
    if (out_.outcome != "not run") return;
    if (net_.remove(var, value)) {
      dfs();
    } else {
      ++weight_[var];
    }
    net_.restore(mark);
  }

  // A kernel cost in the network's units.
  int64_t relative(int64_t cost) const { return cost >= kForbidden ? kForbidden : cost - offset_; }

  const NetworkInput& input_;
  int64_t offset_;  // score >= offset_ + network cost, for plans that fit
  CostNetwork net_;
  Assignment hint_;
  const NetworkSearchOptions& options_;
  const std::function<void(const Assignment&, int64_t)>& on_plan_;
  std::vector<int64_t> weight_;  // per variable: 1 + failures it was branched on
  long scored_ = 0;              // plans scored (one per node)
  long per_score_ = 0;           // values scanned to score one plan and find its conflict: variables, edges and row members
  NetworkSearch out_;
};

}  // namespace

NetworkSearch search_network(const NetworkInput& input, int64_t incumbent, const Assignment& hint,
                             const NetworkSearchOptions& options,
                             const std::function<void(const Assignment&, int64_t)>& on_plan) {
  Search search(input, incumbent, hint, options, on_plan);
  return search.run();
}

}  // namespace shardsynth::synth
