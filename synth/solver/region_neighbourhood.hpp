#pragma once
// Z3 on regions of the incumbent (region_cegis.hpp): a few connected
// regions, each seeded at a node live at the fullest slot or, every other
// time, at any node, re-solved exactly with the rest fixed. The region size
// adapts to how Z3 fares: it grows by a quarter after a proof and shrinks
// by a fifth after a timeout. A region that holds the whole kernel and is
// proven proves the incumbent optimal.
#include "synth/solver/neighbourhood.hpp"

namespace shardsynth::synth {

class RegionNeighbourhood final : public Neighbourhood {
 public:
  explicit RegionNeighbourhood(int attempts) : attempts_(attempts) {}
  std::string_view name() const override { return "z3-region"; }
  int max_backoff() const override { return 31; }
  NeighbourhoodOutcome apply(NeighbourhoodContext& context) override;

 private:
  int seed_node(NeighbourhoodContext& context, int attempt) const;

  int attempts_;           // regions per application
  int region_size_ = 12;   // nodes per region, adapted to how Z3 fares
};

}  // namespace shardsynth::synth
