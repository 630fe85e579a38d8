#pragma once
// The cost network of a small test problem, as network_input builds it, but
// with random row multipliers in place of the LP's duals: shared by the
// network search's and the network portfolio's tests.
#include <random>
#include <vector>

#include "synth/solver/dual_bound.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/network_search.hpp"
#include "synth/solver/row_penalties.hpp"

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

}  // namespace shardsynth::synth
