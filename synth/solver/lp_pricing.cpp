#include "synth/solver/lp_pricing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool allowed(const Problem& p, const ProblemEdge& e, std::size_t k) {
  const int cols = p.nodes[e.to].size();
  return e.costs[k] < kForbidden && p.nodes[e.from].costs[k / cols] < kForbidden &&
         p.nodes[e.to].costs[k % cols] < kForbidden;
}

using Kept = std::vector<std::vector<char>>;  // per edge, per table entry: whether the LP has its column

// Per node, its allowed strategy of least usage (the cheapest of those):
// when any plan keeps the limit, this one does.
Assignment least_usage(const Problem& p) {
  Assignment plan(p.nodes.size(), 0);
  for (std::size_t v = 0; v < p.nodes.size(); ++v) {
    const ProblemNode& node = p.nodes[v];
    auto usage = [&](int s) { return node.usages.empty() ? 0 : node.usages[s]; };
    for (int s = 0; s < node.size(); ++s) {
      const int b = plan[v];
      if (node.costs[s] >= kForbidden) continue;
      if (node.costs[b] >= kForbidden || usage(s) < usage(b) || (usage(s) == usage(b) && node.costs[s] < node.costs[b])) {
        plan[v] = s;
      }
    }
  }
  return plan;
}

// For each strategy of either end of an edge, its cheapest allowed pair;
// every pair of the given plans and of the plan of least usage (so that
// the first LP has a point within the limit when the problem has one).
Kept first_pairs(const Problem& p, std::vector<Assignment> plans) {
  plans.push_back(least_usage(p));
  Kept kept(p.edges.size());
  for (std::size_t e = 0; e < p.edges.size(); ++e) {
    const ProblemEdge& edge = p.edges[e];
    const int rows = p.nodes[edge.from].size(), cols = p.nodes[edge.to].size();
    kept[e].assign(edge.costs.size(), 0);
    std::vector<std::size_t> row_best(rows, edge.costs.size()), col_best(cols, edge.costs.size());
    for (std::size_t k = 0; k < edge.costs.size(); ++k) {
      if (!allowed(p, edge, k)) continue;
      std::size_t& r = row_best[k / cols];
      std::size_t& c = col_best[k % cols];
      if (r == edge.costs.size() || edge.costs[k] < edge.costs[r]) r = k;
      if (c == edge.costs.size() || edge.costs[k] < edge.costs[c]) c = k;
    }
    for (std::size_t k : row_best) {
      if (k < edge.costs.size()) kept[e][k] = 1;
    }
    for (std::size_t k : col_best) {
      if (k < edge.costs.size()) kept[e][k] = 1;
    }
    for (const Assignment& plan : plans) {
      const std::size_t k = static_cast<std::size_t>(plan[edge.from]) * cols + plan[edge.to];
      if (allowed(p, edge, k)) kept[e][k] = 1;
    }
  }
  return kept;
}

Problem restricted(const Problem& p, const Kept& kept, int64_t& pairs) {
  Problem r = p;
  pairs = 0;
  for (std::size_t e = 0; e < r.edges.size(); ++e) {
    for (std::size_t k = 0; k < r.edges[e].costs.size(); ++k) {
      if (!kept[e][k]) {
        r.edges[e].costs[k] = kForbidden;
      } else if (allowed(p, p.edges[e], k)) {
        ++pairs;
      }
    }
  }
  return r;
}

// Prices every allowed pair of `p` with the duals of an LP solved on a
// restriction of it: fills lp.edge_reduced for all of them, moves the
// bound to the whole problem's, and marks (in `kept`) the pairs to add,
// the most negative first, at most as many per edge as its two ends have
// strategies. Returns how many were added.
int64_t price(const Problem& p, LpRelaxation& lp, Kept& kept) {
  long double shift = 0, size = 0;
  int64_t added = 0;
  for (std::size_t e = 0; e < p.edges.size(); ++e) {
    const ProblemEdge& edge = p.edges[e];
    const int cols = p.nodes[edge.to].size();
    std::vector<double>& reduced = lp.edge_reduced[e];
    long double least_kept = kInf, least = kInf;
    std::vector<std::pair<long double, std::size_t>> negative;
    for (std::size_t k = 0; k < edge.costs.size(); ++k) {
      if (!allowed(p, edge, k)) continue;
      if (kept[e][k]) {
        least_kept = std::min<long double>(least_kept, reduced[k]);
      }
      const long double d = static_cast<long double>(edge.costs[k]) - lp.from_duals[e][k / cols] - lp.to_duals[e][k % cols];
      reduced[k] = static_cast<double>(d);
      least = std::min(least, d);
      if (!kept[e][k] && d < -1e-9L * (1 + std::fabs(static_cast<long double>(edge.costs[k])))) negative.emplace_back(d, k);
    }
    if (least_kept < kInf && least < kInf) {
      shift += least - least_kept;
      size += std::fabs(least) + std::fabs(least_kept);
    }
    const std::size_t cap = static_cast<std::size_t>(p.nodes[edge.from].size() + cols);
    if (negative.size() > cap) {
      std::partial_sort(negative.begin(), negative.begin() + static_cast<long>(cap), negative.end());
      negative.resize(cap);
    }
    for (const auto& pair : negative) kept[e][pair.second] = 1;
    added += static_cast<int64_t>(negative.size());
  }
  const long double exact = static_cast<long double>(lp.bound_exact) + shift - (1e-12L * size + 1e-6L);
  lp.bound_exact = static_cast<double>(exact);
  lp.bound = !std::isfinite(lp.bound_exact) || exact <= 0 ? 0 : static_cast<int64_t>(std::ceil(exact));
  return added;
}

bool out_of_time(const PricingOptions& options) { return options.deadline && Clock::now() >= *options.deadline; }

}  // namespace

PricedLp solve_lp_by_pricing(const Problem& problem, const PricingOptions& options) {
  const auto start = Clock::now();
  PricedLp result;
  Kept kept = first_pairs(problem, options.plans);
  LpOptions lp_options;
  lp_options.deadline = options.deadline;
  lp_options.max_columns = options.max_columns;
  lp_options.max_nonzeros = options.max_nonzeros;
  for (;;) {
    if (result.rounds >= options.max_rounds) {
      result.lp.outcome = "round limit";
      break;
    }
    if (result.rounds > 0 && out_of_time(options)) {
      result.lp.outcome = "time limit";
      break;
    }
    LpRelaxation lp = solve_lp_relaxation(restricted(problem, kept, result.pairs), lp_options);
    ++result.rounds;
    if (!lp.has_duals()) {
      if (!result.lp.has_duals()) result.lp = std::move(lp);
      break;
    }
    const std::string outcome = lp.outcome;
    const int64_t added = price(problem, lp, kept);
    result.best_bound = std::max(result.best_bound, lp.bound);
    result.lp = std::move(lp);
    if (outcome != "optimal") break;  // cut short (time): its bound holds, the pricing is not over
    if (added == 0) break;            // the LP optimum of the whole problem
    result.lp.outcome = "pricing";
  }
  result.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return result;
}

}  // namespace shardsynth::synth
