// The registry of the Lagrangian search's neighbourhoods: one line each.
// The order is the order of a round: moves that run every round first, in
// this order; the portfolio orders the others by their record.
#include "synth/solver/bnb_neighbourhood.hpp"
#include "synth/solver/neighbourhood.hpp"
#include "synth/solver/region_neighbourhood.hpp"
#include "synth/solver/repair_polish.hpp"

namespace shardsynth::synth {

std::vector<std::unique_ptr<Neighbourhood>> make_neighbourhoods(const NeighbourhoodOptions& options) {
  std::vector<std::unique_ptr<Neighbourhood>> all;
  all.push_back(std::make_unique<RepairPolish>());
  if (options.region_attempts > 0) all.push_back(std::make_unique<RegionNeighbourhood>(options.region_attempts));
  if (options.bnb_attempts > 0) all.push_back(std::make_unique<BnbNeighbourhood>(options.bnb_attempts, options.seed));
  return all;
}

}  // namespace shardsynth::synth
