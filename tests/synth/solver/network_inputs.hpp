#pragma once
// The cost network of a small test problem, as network_input builds it, but
// with random row multipliers in place of the LP's duals, and the loop over
// small limited problems with their optima: shared by the tests of the
// network search, the network portfolio and the network's regions.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "synth/solver/dual_bound.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/network_search.hpp"
#include "synth/solver/row_penalties.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {

// The folded network of `p`, penalized with multipliers drawn from `rng`
// when `penalize`, then reparameterized. `p` and `folded` must outlive it.
inline NetworkInput folded_input(const Problem& p, const FoldedProblem& folded, std::mt19937& rng, bool penalize) {
  NetworkInput input;
  input.rows = rows_of_folded(folded);
  input.score = [&p, &folded](const Assignment& plan) { return evaluate(p, unfold(folded, plan)); };
  Problem network = folded.kernel;
  int64_t offset = folded.constant;
  if (penalize && folded.usage_limit && *folded.usage_limit > 0) {
    std::vector<double> duals;
    for (std::size_t r = 0; r < input.rows.size(); ++r) duals.push_back(static_cast<double>(rng() % 200) / 10.0);
    input.multipliers = multipliers_of_duals(duals, *folded.usage_limit);
    const PenalizedKernel penalized = penalize_rows(network, input.rows, input.multipliers);
    network = penalized.problem;
    offset += penalized.constant;
  }
  const DualBound dual = reparameterize(network);
  input.network = dual.problem;
  input.offset = offset + dual.constant;
  return input;
}

// Draws `draws` small problems (with `mixed`, every other one from
// ProblemMaker::random, the others binding_problem's with up to 8 nodes)
// and calls `body(problem, folded, optimum)` on each that has a usage limit
// and a plan (its brute-force optimum); `body` returns whether it checked
// the problem. Returns how many it checked.
template <typename F>
int for_each_limited_problem(std::mt19937& rng, int draws, bool mixed, F&& body) {
  ProblemMaker maker(rng);
  int checked = 0;
  for (int i = 0; i < draws; ++i) {
    const Problem p = mixed && i % 2 == 0 ? maker.random() : binding_problem(rng, 8);
    if (!p.usage_limit) continue;
    const int64_t optimum = brute_force(p).cost;
    if (optimum >= kForbidden) continue;
    CAPTURE(i);
    const FoldedProblem folded = fold_problem(p);
    if (body(p, folded, optimum)) ++checked;
  }
  return checked;
}

}  // namespace shardsynth::synth
