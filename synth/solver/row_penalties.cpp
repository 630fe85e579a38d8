#include "synth/solver/row_penalties.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace shardsynth::synth {
namespace {

// Fixed-point scale of the multipliers.
constexpr int64_t kScale = 65536;

}  // namespace

RowMultipliers multipliers_of_duals(const std::vector<double>& duals, int64_t per_bytes) {
  if (per_bytes <= 0) throw std::invalid_argument("multipliers_of_duals: per_bytes " + std::to_string(per_bytes) + " is not positive");
  RowMultipliers m;
  m.den = per_bytes * kScale;
  for (const double d : duals) m.q.push_back(d > 0 ? static_cast<int64_t>(std::floor(static_cast<long double>(d) * kScale)) : 0);
  return m;
}

PenalizedKernel penalize_rows(const Problem& network, const std::vector<KnapsackRow>& rows, const RowMultipliers& m) {
  if (rows.size() != m.q.size()) throw std::invalid_argument("penalize_rows: rows and multipliers differ in number");
  PenalizedKernel out{network, 0};
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (m.q[r] <= 0) continue;
    out.constant -= penalty(m.q[r], rows[r].capacity, m.den);
    for (std::size_t k = 0; k < rows[r].vars.size(); ++k) {
      auto& node = out.problem.nodes[rows[r].vars[k]];
      for (int s = 0; s < node.size(); ++s) {
        if (node.costs[s] < kForbidden) node.costs[s] = cost_add(node.costs[s], penalty(m.q[r], rows[r].weights[k][s], m.den));
      }
    }
  }
  return out;
}

}  // namespace shardsynth::synth
