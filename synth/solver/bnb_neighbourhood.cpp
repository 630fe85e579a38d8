#include "synth/solver/bnb_neighbourhood.hpp"

#include <algorithm>
#include <chrono>

#include "synth/solver/interrupt.hpp"
#include "synth/solver/region_bnb.hpp"
#include "synth/solver/region_cegis.hpp"

namespace shardsynth::synth {
namespace {

constexpr int kMinRegion = 4;    // nodes
constexpr int kMaxRegion = 400;  // nodes

bool out_of_time(const NeighbourhoodContext& context) {
  return (context.deadline && std::chrono::steady_clock::now() >= *context.deadline) || interrupt_requested();
}

// Nodes live at the first fullest slot of the incumbent (empty without a limit).
std::vector<int> live_at_peak(NeighbourhoodContext& context) {
  const UsageProfile& profile = context.incumbent.profile();
  if (!context.folded.usage_limit || profile.slots() == 0) return {};
  return context.incumbent.covering(profile.first_above(0, profile.slots(), profile.max() - 1));
}

// The region: on even attempts with a limit, two clusters of half the size
// around two nodes live at the fullest slot, so that the region can trade
// memory there between parts of the graph far apart; otherwise one
// cluster around any node.
std::vector<int> choose_region(NeighbourhoodContext& context, std::mt19937_64& rng, int attempt, int size) {
  const Problem& kernel = context.folded.kernel;
  const auto& incidences = context.incumbent.incidences();
  const int n = static_cast<int>(kernel.nodes.size());
  const std::vector<int> live = attempt % 2 == 0 ? live_at_peak(context) : std::vector<int>{};
  if (live.size() < 2) return grow_region(kernel, incidences, static_cast<int>(rng() % n), size, rng);
  std::vector<int> region = grow_region(kernel, incidences, live[rng() % live.size()], size / 2, rng);
  const std::vector<int> other = grow_region(kernel, incidences, live[rng() % live.size()], size - size / 2, rng);
  region.insert(region.end(), other.begin(), other.end());
  std::sort(region.begin(), region.end());
  region.erase(std::unique(region.begin(), region.end()), region.end());
  return region;
}

}  // namespace

NeighbourhoodOutcome BnbNeighbourhood::apply(NeighbourhoodContext& context) {
  NeighbourhoodOutcome out;
  if (!context.have_incumbent || context.folded.kernel.nodes.empty() || ++calls_ <= kBnbWarmUp) {
    out.skipped = true;
    return out;
  }
  for (int a = 0; a < attempts_ && !out_of_time(context); ++a) {
    const auto region = choose_region(context, rng_, a, region_size_);
    const BnbOutcome r = solve_region_bnb(context.incumbent, region, kBnbWork, context.deadline);
    out.work += 1 + r.work / 4096;
    if (r.improved) out.improved = context.offer(context.incumbent.assignment(), false) || out.improved;
    region_size_ = r.proven ? std::min(region_size_ + std::max(1, region_size_ / 4), kMaxRegion)
                            : std::max(kMinRegion, region_size_ * 4 / 5);
  }
  return out;
}

}  // namespace shardsynth::synth
