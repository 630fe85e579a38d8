#pragma once
// The propagating branch and bound (region_bnb.hpp) on regions of the
// incumbent, as a neighbourhood: a few regions solved with the rest fixed
// under a budget of work. Every other region is two clusters of half the
// size around two nodes live at the fullest slot, so that it can trade
// memory there between parts of the graph far apart (on M this beat one
// cluster at equal rounds, BENCHMARKS.md); the others are one cluster
// around any node. The region size adapts as in CP-SAT's and toulbar2's
// neighbourhood searches: it grows by a quarter when a search finishes
// within the budget and shrinks by a fifth when the budget runs out. It
// sits out the first kBnbWarmUp rounds.
// Its regions are drawn from a random stream of its own, not the
// search's: on the search's stream every draw shifted the priced proposals
// and hence the multipliers, and with them the Lagrangian bound (M's fell
// from 48.49e9 to 47.16e9 at equal rounds, BENCHMARKS.md).
#include <cstdint>
#include <random>

#include "synth/solver/neighbourhood.hpp"

namespace shardsynth::synth {

// Mixed into the search's seed for the neighbourhood's own random stream.
inline constexpr uint64_t kBnbStream = 0x9e3779b97f4a7c15ULL;

class BnbNeighbourhood final : public Neighbourhood {
 public:
  BnbNeighbourhood(int attempts, uint64_t seed) : attempts_(attempts), rng_(seed ^ kBnbStream) {}
  std::string_view name() const override { return "bnb-region"; }
  int max_backoff() const override { return 31; }
  NeighbourhoodOutcome apply(NeighbourhoodContext& context) override;

  int region_size() const { return region_size_; }  // nodes of the next region

 private:
  int attempts_;           // regions per application
  int region_size_ = 16;   // nodes per region, adapted to how the search fares
  long calls_ = 0;         // applications asked for so far, the warm-up's included
  std::mt19937_64 rng_;    // its own random stream (regions' seeds and growth), apart from the search's
};

// Rounds the neighbourhood sits out at the start, while the priced
// proposals still improve fast: on the development set's 10,000 to 30,000
// node problems at 20 s, regions from the first round took rounds from
// them and ended 0.6-4.7% dearer (BENCHMARKS.md).
inline constexpr long kBnbWarmUp = 32;

// Values each region's branch and bound may scan (region_bnb.hpp's work).
inline constexpr long kBnbWork = 6000000;

}  // namespace shardsynth::synth
