#pragma once
// Repair and polish: the proposal is repaired until it keeps the limit
// (moves cheapest per byte freed, on the priced costs), then descended on
// the true costs with the limit kept, and offered. It runs every round: it
// is how the Lagrangian proposal becomes a plan.
#include "synth/solver/neighbourhood.hpp"

namespace shardsynth::synth {

class RepairPolish final : public Neighbourhood {
 public:
  std::string_view name() const override { return "repair-polish"; }
  int max_backoff() const override { return 0; }
  NeighbourhoodOutcome apply(NeighbourhoodContext& context) override;
};

// Repairs and polishes `search`'s current assignment in place and offers it
// (shared with the bound pass, which polishes its decoded assignment too).
NeighbourhoodOutcome repair_and_polish(NeighbourhoodContext& context, LocalSearch& search);

}  // namespace shardsynth::synth
