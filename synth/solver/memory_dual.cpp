#include "synth/solver/memory_dual.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "synth/solver/dual_bound.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/path_relink.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// A priced cost, rounded down and capped far below kForbidden.
int64_t priced(int64_t cost, double penalty) {
  constexpr double kCap = 1e17;
  if (cost >= kForbidden) return cost;
  const double v = static_cast<double>(cost) + penalty;
  return v >= kCap ? static_cast<int64_t>(kCap) : static_cast<int64_t>(std::floor(v));
}

}  // namespace

class MemoryDual::Impl {
 public:
  Impl(const FoldedProblem& folded, const MemoryDualOptions& options)
      : folded_(folded), options_(options), warm_(folded.kernel), margin_(options.first_margin) {
    lambda_.assign(folded.base.size(), 0.0);
    held_.resize(folded.kernel.nodes.size());
    for (std::size_t u = 0; u < held_.size(); ++u) held_[u] = folded.kernel.nodes[u].costs;
  }

  void run(const std::atomic<bool>& stop, long steps) {
    if (!folded_.usage_limit || folded_.kernel.nodes.empty()) return;
    for (long k = 0; (steps == 0 || k < steps) && !stop.load(std::memory_order_relaxed) && !out_of_time(); ++k) {
      if (!step()) return;
    }
  }

  int64_t lower_bound() const { return bound_.load(std::memory_order_relaxed); }
  long steps() const { return steps_.load(std::memory_order_relaxed); }
  void add_plan(const Assignment& kernel) {
    if (kernel.size() != folded_.kernel.nodes.size()) return;
    sort(kernel);
    plan_cost_ = std::min(plan_cost_, cost_without_usage(folded_.kernel, kernel));
  }
  const Assignment& decoded() const { return decoded_; }
  Assignment take_feasible() { return std::exchange(feasible_, {}); }

 private:
  bool out_of_time() const { return (options_.deadline && Clock::now() >= *options_.deadline) || interrupt_requested(); }

  // One evaluation at the current multipliers, then a move of them.
  // Returns false when there is nothing left to do.
  bool step() {
    reprice();
    DualOptions dual;
    // Near the top (a small margin) the multipliers move little, and more
    // sweeps tighten the bound at them.
    dual.max_passes = margin_ < options_.settled_margin ? options_.settled_sweeps : options_.sweeps_per_step;
    dual.stall_passes = dual.max_passes;
    dual.deadline = options_.deadline;
    dual.decode_first = 0;
    dual.decode_every = dual.max_passes + 1;  // decode after the last sweep only
    DualBound d = reparameterize(warm_, dual);
    steps_.fetch_add(1, std::memory_order_relaxed);
    if (d.constant >= kForbidden || d.primal.empty()) return false;
    warm_ = std::move(d.problem);
    constant_ += d.constant;
    const double value = static_cast<double>(constant_) + offset();
    publish(value);
    decoded_ = d.primal;
    const bool moved = move(d.primal, value);
    if (options_.probe_every > 0 && steps() % options_.probe_every == 0) {
      sort(decoded_);
      probe();
      relink_pairs();
    }
    return moved;
  }

  // sum_t lambda_t (base_t - limit): the price of the usage no choice changes, less the limit's.
  double offset() const {
    double sum = 0;
    const double limit = static_cast<double>(*folded_.usage_limit);
    for (std::size_t t = 0; t < lambda_.size(); ++t) sum += lambda_[t] * (static_cast<double>(folded_.base[t]) - limit);
    return sum;
  }

  // Keeps a bound that the dual value proves, less a rounding slack.
  void publish(double value) {
    const double slack = 1e-9 * (std::abs(static_cast<double>(constant_)) + std::abs(offset())) + 1;
    const double candidate = std::floor(value - slack);
    if (candidate > static_cast<double>(lower_bound()) && candidate < 9e18) {
      bound_.store(static_cast<int64_t>(candidate), std::memory_order_relaxed);
    }
  }

  // Polyak's step towards `margin_` above the best bound; the margin halves
  // when the bound has not risen for `patience` steps. False when the
  // subgradient is zero (the decoded assignment keeps the limit where
  // anything is priced).
  bool move(const Assignment& x, double value) {
    if (value > best_value_ + 1e-9 * std::abs(best_value_)) {
      best_value_ = value;
      stalled_ = 0;
    } else if (++stalled_ >= options_.patience) {
      margin_ /= 2;
      stalled_ = 0;
      if (margin_ < options_.least_margin) margin_ = options_.first_margin;
    }
    const std::vector<int64_t> used = usage_profile_of(folded_, x);
    const double limit = static_cast<double>(*folded_.usage_limit);
    // The direction: the subgradient, deflected by the last direction
    // (a share `deflection` of it) to damp the flips between two decodes.
    std::vector<double> g(used.size());
    double norm = 0;
    const bool deflect = direction_.size() == used.size();
    for (std::size_t t = 0; t < used.size(); ++t) {
      g[t] = static_cast<double>(used[t]) - limit;
      if (deflect) g[t] = (1 - options_.deflection) * g[t] + options_.deflection * direction_[t];
      if (lambda_[t] <= 0 && g[t] < 0) g[t] = 0;
      norm += g[t] * g[t];
    }
    direction_ = g;
    if (norm <= 0) return false;
    const double target = std::max(best_value_, value) + margin_ * std::max(1.0, std::abs(best_value_));
    const double size = (target - value) / norm;
    for (std::size_t t = 0; t < lambda_.size(); ++t) lambda_[t] = std::max(0.0, lambda_[t] + size * g[t]);
    return true;
  }

  // Prices every strategy at the multipliers times `scale` and moves the
  // change into `tables`' node costs (a reparameterization holds for any
  // node costs, so TRW-S goes on from where it was); `held` is what the
  // tables held and becomes the new prices.
  void reprice(double scale, Problem& tables, std::vector<std::vector<int64_t>>& held) const {
    std::vector<double> prefix(lambda_.size() + 1, 0.0);
    for (std::size_t t = 0; t < lambda_.size(); ++t) prefix[t + 1] = prefix[t] + scale * lambda_[t];
    for (std::size_t u = 0; u < held.size(); ++u) {
      const auto& costs = folded_.kernel.nodes[u].costs;
      std::vector<double> penalty(costs.size(), 0.0);
      for (const auto& p : folded_.pieces[u]) {
        const double weight = prefix[p.to] - prefix[p.from];
        if (weight == 0) continue;
        for (std::size_t s = 0; s < p.usages.size(); ++s) penalty[s] += weight * static_cast<double>(p.usages[s]);
      }
      for (std::size_t s = 0; s < costs.size(); ++s) {
        const int64_t now = priced(costs[s], penalty[s]);
        int64_t& c = tables.nodes[u].costs[s];
        if (c < kForbidden) c += now - held[u][s];
        held[u][s] = now;
      }
    }
  }
  void reprice() { reprice(1.0, warm_, held_); }

  // Keeps a decoded assignment as the newest one that keeps the limit
  // (`dear_`) or breaks it (`cheap_`).
  void sort(const Assignment& x) {
    const std::vector<int64_t> used = usage_profile_of(folded_, x);
    const bool keeps = *std::max_element(used.begin(), used.end()) <= *folded_.usage_limit;
    std::vector<Assignment>& kept = keeps ? dear_ : cheap_;
    if (std::find(kept.begin(), kept.end(), x) != kept.end()) return;
    kept.push_back(x);
    if (static_cast<int>(kept.size()) > options_.relink_keep) kept.erase(kept.begin());
  }

  // Relinks every pair of a kept assignment that breaks the limit and one
  // that keeps it (path_relink.hpp); the cheapest mix is offered.
  void relink_pairs() {
    Assignment best;
    int64_t best_cost = kForbidden;
    for (const Assignment& a : cheap_) {
      for (const Assignment& b : dear_) {
        Assignment mixed = relink(folded_, a, b);
        if (mixed.empty()) continue;
        const int64_t c = cost_without_usage(folded_.kernel, mixed);
        if (c < best_cost) {
          best_cost = c;
          best = std::move(mixed);
        }
      }
    }
    if (!best.empty() && best_cost < plan_cost_) keep_plan(std::move(best));
  }

  // Offers a plan that keeps the limit to the searches (take_feasible) and
  // keeps its cost as the step's target when it is the cheapest so far.
  void keep_plan(Assignment x) {
    plan_cost_ = std::min(plan_cost_, cost_without_usage(folded_.kernel, x));
    feasible_ = std::move(x);
  }

  // A primal probe: the assignment decoded at the multipliers scaled by
  // `scale_` (memory priced higher, so it tends to keep the limit), on a
  // copy of the warm tables. One that keeps the limit is kept in
  // `feasible_` and the scale moves down towards 1; otherwise it moves up.
  void probe() {
    Problem tables = warm_;
    std::vector<std::vector<int64_t>> held = held_;
    reprice(scale_, tables, held);
    DualOptions dual;
    dual.max_passes = 2 * options_.sweeps_per_step;
    dual.stall_passes = dual.max_passes;
    dual.deadline = options_.deadline;
    dual.decode_first = 0;
    dual.decode_every = dual.max_passes + 1;
    const DualBound d = reparameterize(tables, dual);
    if (d.primal.empty()) return;
    const std::vector<int64_t> used = usage_profile_of(folded_, d.primal);
    const bool keeps = *std::max_element(used.begin(), used.end()) <= *folded_.usage_limit;
    sort(d.primal);
    if (keeps) {
      keep_plan(d.primal);
      scale_ = 1 + (scale_ - 1) / 2;
    } else {
      scale_ = std::min(1 + 2 * (scale_ - 1), 64.0);
    }
  }

  const FoldedProblem& folded_;
  const MemoryDualOptions options_;
  Problem warm_;                              // the kernel on the priced costs, reparameterized so far
  int64_t constant_ = 0;                      // priced cost of x = constant_ + warm_ cost of x
  std::vector<std::vector<int64_t>> held_;    // per node and strategy: the priced cost that warm_ holds
  std::vector<double> lambda_;                // per slot: multiplier of its usage row (cost per byte)
  double margin_;                             // the step's target, as a fraction above the best bound
  std::vector<double> direction_;             // the last step's direction, per slot
  int64_t plan_cost_ = kForbidden;            // the cheapest plan found so far, here or added (kernel costs)
  double best_value_ = -1e300;                // the best dual value so far (kernel costs)
  int stalled_ = 0;                           // steps since best_value_ last rose
  Assignment decoded_;                        // the last decoded assignment
  std::vector<Assignment> cheap_;             // the newest decoded assignments that break the limit, oldest first
  std::vector<Assignment> dear_;              // the newest decoded assignments that keep it, oldest first
  Assignment feasible_;                       // the last probe's assignment that kept the limit (empty = none yet)
  double scale_ = 1.1;                        // the probes' factor on the multipliers
  std::atomic<int64_t> bound_{0};             // the best proven bound, read by other threads
  std::atomic<long> steps_{0};                // evaluations so far, read by other threads
};

MemoryDual::MemoryDual(const FoldedProblem& folded, const MemoryDualOptions& options)
    : impl_(std::make_unique<Impl>(folded, options)) {}
MemoryDual::~MemoryDual() = default;
void MemoryDual::run(const std::atomic<bool>& stop, long steps) { impl_->run(stop, steps); }
int64_t MemoryDual::lower_bound() const { return impl_->lower_bound(); }
long MemoryDual::steps() const { return impl_->steps(); }
void MemoryDual::add_plan(const Assignment& kernel) { impl_->add_plan(kernel); }
const Assignment& MemoryDual::decoded() const { return impl_->decoded(); }
Assignment MemoryDual::take_feasible() { return impl_->take_feasible(); }

}  // namespace shardsynth::synth
