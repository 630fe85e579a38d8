#include "synth/solver/lagrangian_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "synth/solver/dual_bound.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/local_search.hpp"
#include "synth/solver/neighbourhood_portfolio.hpp"
#include "synth/solver/repair_polish.hpp"
#include "synth/solver/step_rule.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

class LagrangianSearch::Impl {
 public:
  Impl(const FoldedProblem& folded, const LagrangianOptions& options)
      : folded_(folded),
        options_(options),
        search_(folded),
        incumbent_(folded),
        rng_(options.seed),
        moves_(make_neighbourhoods({options.region_attempts, options.bnb_attempts, options.seed})) {
    const int n = static_cast<int>(folded.kernel.nodes.size());
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), 0);
    lambda_.assign(folded.base.size(), 0.0);
    penalty_.resize(n);
    for (int u = 0; u < n; ++u) penalty_[u].assign(folded.kernel.nodes[u].size(), 0.0);
  }

  std::vector<KernelPlan> run(long rounds) {
    if (!started_) start();
    for (long k = 0; k < rounds && !finished_ && !out_of_time(); ++k) round();
    std::vector<KernelPlan> out = std::move(found_);
    found_.clear();
    return out;
  }

  void beat(int64_t cost) { best_cost_ = std::min(best_cost_, cost); }
  void propose_from(const Assignment& kernel) {
    if (kernel.size() != folded_.kernel.nodes.size() || !started_ || finished_) return;
    const Assignment own = search_.assignment();
    search_.set(kernel);
    polish_and_offer();
    search_.set(own);
  }
  bool adopt(const Assignment& kernel) {
    if (kernel.size() != folded_.kernel.nodes.size() || !started_ || finished_) return false;
    const int64_t c = cost_without_usage(folded_.kernel, kernel);
    if (c >= own_best_) return false;
    own_best_ = c;
    best_cost_ = std::min(best_cost_, c);
    incumbent_.set(kernel);
    have_incumbent_ = true;
    return true;
  }
  long rounds() const { return rounds_; }
  bool finished() const { return finished_; }
  int64_t lower_bound() const { return lower_bound_; }
  long last_improvement() const { return last_improvement_; }
  bool proven() const { return proven_; }
  int64_t own_best() const { return own_best_; }
  Assignment incumbent() const { return have_incumbent_ ? incumbent_.assignment() : Assignment{}; }

 private:
  bool out_of_time() const { return (options_.deadline && Clock::now() >= *options_.deadline) || interrupt_requested(); }

  void start() {
    started_ = true;
    const int n = static_cast<int>(folded_.kernel.nodes.size());
    if (n == 0) {  // nothing to search (anytime_search settles an empty kernel before any search starts)
      finished_ = true;
      return;
    }
    // The cheapest assignment TRW-S decodes with the limit ignored; its
    // bound is the Lagrangian bound at zero multipliers.
    DualOptions dual;
    // A few sweeps only: the start needs a decoded assignment, and the
    // bound gets tightened by the priced passes later.
    dual.max_passes = 8;
    dual.decode_first = 2;
    dual.decode_every = 4;
    dual.deadline = options_.deadline;
    DualBound d = reparameterize(folded_.kernel, dual);
    lower_bound_ = std::max<int64_t>(lower_bound_, std::min(d.constant, kForbidden));
    if (d.constant < kForbidden) {
      warm_constant_ = d.constant;
      warm_ = std::move(d.problem);
    } else {
      warm_ = folded_.kernel;
    }
    warm_priced_.resize(n);
    for (int u = 0; u < n; ++u) warm_priced_[u] = folded_.kernel.nodes[u].costs;
    search_.set(d.primal.empty() ? Assignment(n, 0) : d.primal);
    if (!folded_.usage_limit) {  // nothing to price: one descent from the decoded assignment
      search_.descend(order_, nullptr, false);
      offer(search_.assignment());
      finished_ = true;
    }
  }

  // A feasible assignment: this search's incumbent when it is its best so
  // far, and a found plan when it beats the cost to beat. Returns whether
  // it became this search's best.
  bool offer(const Assignment& x, bool by_region = false) {
    const int64_t c = cost_without_usage(folded_.kernel, x);
    if (c >= kForbidden) return false;
    const bool own = c < own_best_;
    if (own) {
      own_best_ = c;
      if (&x != &incumbent_.assignment()) incumbent_.set(x);
      have_incumbent_ = true;
    }
    if (c >= best_cost_) return own;
    best_cost_ = c;
    last_improvement_ = rounds_;
    found_.push_back({x, c, rounds_, by_region});
    return own;
  }

  NeighbourhoodContext context() {
    return {folded_, search_,  incumbent_, have_incumbent_, penalty_, order_, rng_, options_.deadline,
            [this](const Assignment& x, bool by_region) { return offer(x, by_region); }};
  }

  // One round: the priced proposal, the neighbourhoods the portfolio
  // chooses, then a step of the multipliers (and, every bound_every
  // rounds, the Lagrangian bound).
  void round() {
    ++rounds_;
    propose();
    const Subgradient sub = subgradient();
    NeighbourhoodContext ctx = context();
    const NeighbourhoodOutcome proof = moves_.round(ctx);
    if (proof.proven) {
      // The region was the whole kernel: Z3's unsat proves the incumbent optimal.
      proven_ = true;
      finished_ = true;
      lower_bound_ = std::max(lower_bound_, proof.proven_cost);
    }
    if (!step_.update(sub, {lower_bound_, own_best_}, lambda_)) return;
    price();
    if (options_.bound_every > 0 && rounds_ % options_.bound_every == 0) bound();
  }

  // The proposal: forest moves and a descent on the priced costs, limit ignored.
  void propose() {
    std::shuffle(order_.begin(), order_.end(), rng_);
    for (int k = 0; k < 4; ++k) {
      if (search_.forest_move(rng_, &penalty_) == 0) break;
    }
    search_.descend(order_, &penalty_, false, 50);
  }

  // The subgradient of the dual at these multipliers, projected onto lambda >= 0.
  Subgradient subgradient() const {
    Subgradient sub;
    const std::vector<int64_t> used = search_.profile().values();
    const double limit = static_cast<double>(*folded_.usage_limit);
    sub.dual = static_cast<double>(search_.cost());
    sub.g.resize(used.size());
    for (std::size_t t = 0; t < used.size(); ++t) {
      sub.g[t] = static_cast<double>(used[t]) - limit;
      sub.dual += lambda_[t] * sub.g[t];
      if (lambda_[t] <= 0 && sub.g[t] < 0) sub.g[t] = 0;
      sub.norm += sub.g[t] * sub.g[t];
    }
    return sub;
  }

  // Repairs the current assignment into one that keeps the limit (on the
  // priced costs), polishes it on the true costs and offers it.
  void polish_and_offer() {
    NeighbourhoodContext ctx = context();
    repair_and_polish(ctx, search_);
  }

  // Penalty of each strategy: its usage on each piece times the multipliers
  // summed over the piece's slots.
  void price() {
    std::vector<double> prefix(lambda_.size() + 1, 0.0);
    for (std::size_t t = 0; t < lambda_.size(); ++t) prefix[t + 1] = prefix[t] + lambda_[t];
    for (std::size_t u = 0; u < penalty_.size(); ++u) {
      std::fill(penalty_[u].begin(), penalty_[u].end(), 0.0);
      for (const auto& p : folded_.pieces[u]) {
        const double weight = prefix[p.to] - prefix[p.from];
        if (weight == 0) continue;
        for (std::size_t s = 0; s < p.usages.size(); ++s) penalty_[u][s] += weight * static_cast<double>(p.usages[s]);
      }
    }
  }

  // The kernel's costs plus the priced usage, rounded down to integers.
  std::vector<std::vector<int64_t>> priced_costs() const {
    constexpr double kCap = 1e17;
    std::vector<std::vector<int64_t>> priced(penalty_.size());
    for (std::size_t u = 0; u < priced.size(); ++u) {
      priced[u] = folded_.kernel.nodes[u].costs;
      for (std::size_t s = 0; s < priced[u].size(); ++s) {
        int64_t& c = priced[u][s];
        if (c >= kForbidden) continue;
        const double v = static_cast<double>(c) + penalty_[u][s];
        c = v >= kCap ? static_cast<int64_t>(kCap) : static_cast<int64_t>(std::floor(v));
      }
    }
    return priced;
  }

  // min over x of cost(x) + sum_t lambda_t (usage_t(x) - limit) is at most
  // the optimum under the limit; TRW-S bounds the first part from below on
  // costs rounded down. TRW-S stays warm from one call to the next: a
  // reparameterization holds for any node costs, so the change of the
  // priced costs is added to the reparameterized node costs and the
  // message passing goes on from there.
  void bound() {
    double offset = 0;  // sum_t lambda_t (base_t - limit)
    for (std::size_t t = 0; t < lambda_.size(); ++t) {
      offset += lambda_[t] * (static_cast<double>(folded_.base[t]) - static_cast<double>(*folded_.usage_limit));
    }
    std::vector<std::vector<int64_t>> priced = priced_costs();
    for (std::size_t u = 0; u < priced.size(); ++u) {
      for (std::size_t s = 0; s < priced[u].size(); ++s) {
        int64_t& c = warm_.nodes[u].costs[s];
        if (c < kForbidden) c += priced[u][s] - warm_priced_[u][s];
      }
    }
    warm_priced_ = std::move(priced);
    DualOptions dual;
    dual.max_passes = 40;
    dual.deadline = options_.deadline;
    // The assignment decoded from the priced tables is a proposal too.
    dual.decode_first = 0;
    dual.decode_every = dual.max_passes + 1;
    DualBound d = reparameterize(warm_, dual);
    if (!d.primal.empty()) {
      const Assignment proposal = search_.assignment();
      search_.set(d.primal);
      polish_and_offer();
      search_.set(proposal);
    }
    if (d.constant >= kForbidden) return;
    warm_ = std::move(d.problem);
    warm_constant_ += d.constant;
    // Rounding slack: one unit per thousand of the magnitudes involved.
    const double value = static_cast<double>(warm_constant_) + offset;
    const double slack = 1e-9 * (std::abs(static_cast<double>(warm_constant_)) + std::abs(offset)) + 1;
    const double candidate = std::floor(value - slack);
    if (candidate > static_cast<double>(lower_bound_) && candidate < 9e18) lower_bound_ = static_cast<int64_t>(candidate);
  }

  const FoldedProblem& folded_;
  const LagrangianOptions options_;
  LocalSearch search_;
  LocalSearch incumbent_;                     // the best feasible assignment, improved region by region
  Problem warm_;                              // the kernel on the priced costs, reparameterized by TRW-S so far
  int64_t warm_constant_ = 0;                 // priced cost of x = warm_constant_ + warm_ cost of x
  std::vector<std::vector<int64_t>> warm_priced_;  // per node and strategy: the priced cost that warm_ holds
  bool have_incumbent_ = false;               // whether incumbent_ holds a feasible plan
  std::mt19937_64 rng_;                       // the search's one random stream
  NeighbourhoodPortfolio moves_;              // the moves after each proposal (neighbourhoods.cpp)
  PolyakStep step_;                           // the multipliers' step rule (step_rule.hpp)
  std::vector<int> order_;
  std::vector<double> lambda_;                // per slot: multiplier of its usage row
  std::vector<std::vector<double>> penalty_;  // per kernel node and strategy: priced usage
  int64_t best_cost_ = kForbidden;            // the cost to beat
  int64_t own_best_ = kForbidden;             // this search's best feasible cost (its incumbent's)
  int64_t lower_bound_ = 0;
  long rounds_ = 0;
  long last_improvement_ = 0;
  bool started_ = false;
  bool finished_ = false;
  bool proven_ = false;  // Z3 proved the incumbent optimal on the whole kernel
  std::vector<KernelPlan> found_;
};

LagrangianSearch::LagrangianSearch(const FoldedProblem& folded, const LagrangianOptions& options)
    : impl_(std::make_unique<Impl>(folded, options)) {}
LagrangianSearch::~LagrangianSearch() = default;
std::vector<KernelPlan> LagrangianSearch::run(long rounds) { return impl_->run(rounds); }
void LagrangianSearch::beat(int64_t cost) { impl_->beat(cost); }
void LagrangianSearch::propose(const Assignment& kernel) { impl_->propose_from(kernel); }
bool LagrangianSearch::adopt(const Assignment& kernel) { return impl_->adopt(kernel); }
long LagrangianSearch::rounds() const { return impl_->rounds(); }
bool LagrangianSearch::finished() const { return impl_->finished(); }
int64_t LagrangianSearch::lower_bound() const { return impl_->lower_bound(); }
long LagrangianSearch::last_improvement() const { return impl_->last_improvement(); }
bool LagrangianSearch::proven() const { return impl_->proven(); }
int64_t LagrangianSearch::own_best() const { return impl_->own_best(); }
Assignment LagrangianSearch::incumbent() const { return impl_->incumbent(); }


}  // namespace shardsynth::synth
