#pragma once
// Knapsack rows (knapsack_rows.hpp) moved into a network's costs as
// Lagrangian penalties: each row r with multiplier lambda_r (cost per byte)
// adds floor(lambda_r * weight) to every value of its members and takes
// floor(lambda_r * capacity) out as a constant. For every plan that fits
// the rows, each row's weights sum to at most its capacity, so
//   cost(x) >= constant + penalized cost(x),
// and any lower bound on the penalized problem (reparameterize, the cost
// network) is one on the plans that fit. With the LP
// relaxation's row duals as multipliers, the penalized problem's local
// polytope bound is the LP's bound with the rows (LP duality), which TRW-S
// then nearly reaches without any memory row.
#include <cstdint>
#include <vector>

#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// Multipliers in fixed point: row r's is q[r] / den cost units per byte.
struct RowMultipliers {
  std::vector<int64_t> q;  // per row: numerator, >= 0
  int64_t den = 1;         // common denominator (> 0)
};

// floor(q * bytes / den): what a multiplier adds to a value of that weight
// (and, with the capacity, what it takes out as a constant).
inline int64_t penalty(int64_t q, int64_t bytes, int64_t den) {
  return static_cast<int64_t>(static_cast<__int128>(q) * bytes / den);
}

// The multipliers of LP row duals given in cost units per `per_bytes`
// bytes (LpRelaxation::binding_duals with the usage limit), rounded down to
// 1/65536 of a cost unit.
RowMultipliers multipliers_of_duals(const std::vector<double>& duals, int64_t per_bytes);

struct PenalizedKernel {
  Problem problem;       // the network with the penalties in its node costs (edges, usages and limit unchanged)
  int64_t constant = 0;  // minus the penalties' constants: cost(x) >= constant + problem's cost(x) for every x that fits the rows
};

// Adds penalty(q[r], weight, den) to each value of row r's members and
// takes penalty(q[r], capacity, den) out as the constant.
PenalizedKernel penalize_rows(const Problem& network, const std::vector<KnapsackRow>& rows, const RowMultipliers& m);

}  // namespace shardsynth::synth
