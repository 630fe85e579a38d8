#include "synth/solver/neighbourhood_portfolio.hpp"

#include <algorithm>

namespace shardsynth::synth {

NeighbourhoodPortfolio::NeighbourhoodPortfolio(std::vector<std::unique_ptr<Neighbourhood>> all)
    : all_(std::move(all)), records_(all_.size()) {}

// Every-round moves first in registration order, then the others by their
// improvements per unit of work (cross-multiplied, so no floating point).
std::vector<int> NeighbourhoodPortfolio::order() const {
  std::vector<int> order(all_.size());
  for (int k = 0; k < size(); ++k) order[k] = k;
  auto rate_above = [&](int a, int b) {
    const auto& ra = records_[a];
    const auto& rb = records_[b];
    return (ra.improvements + 1) * (rb.work + 1) > (rb.improvements + 1) * (ra.work + 1);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const bool every_a = all_[a]->max_backoff() == 0, every_b = all_[b]->max_backoff() == 0;
    if (every_a != every_b) return every_a;
    return !every_a && rate_above(a, b);
  });
  return order;
}

void NeighbourhoodPortfolio::record(int k, const NeighbourhoodOutcome& outcome) {
  NeighbourhoodRecord& r = records_[k];
  if (outcome.skipped) return;
  ++r.applications;
  r.work += outcome.work;
  if (outcome.improved) ++r.improvements;
  const int cap = all_[k]->max_backoff();
  r.backoff = outcome.improved ? 0 : std::min(2 * r.backoff + 1, cap);
  r.wait = r.backoff;
}

NeighbourhoodOutcome NeighbourhoodPortfolio::round(NeighbourhoodContext& context) {
  for (int k : order()) {
    NeighbourhoodRecord& r = records_[k];
    if (r.wait > 0) {
      --r.wait;
      continue;
    }
    const NeighbourhoodOutcome outcome = all_[k]->apply(context);
    if (outcome.proven) return outcome;
    record(k, outcome);
  }
  return {};
}

}  // namespace shardsynth::synth
