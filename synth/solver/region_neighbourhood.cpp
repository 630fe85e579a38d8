#include "synth/solver/region_neighbourhood.hpp"

#include <algorithm>
#include <chrono>

#include "synth/solver/interrupt.hpp"
#include "synth/solver/region_cegis.hpp"

namespace shardsynth::synth {
namespace {

// Z3 resource units per region check, and for all of a region's checks: a
// region whose checks keep finding slightly cheaper plans otherwise goes on
// for hundreds of them (on the generated d20k-a, 788 checks and 13 s of a
// 20 s run).
constexpr RegionRlimit kRlimit{400'000, 1'600'000};

bool out_of_time(const NeighbourhoodContext& context) {
  return (context.deadline && std::chrono::steady_clock::now() >= *context.deadline) || interrupt_requested();
}

}  // namespace

// The region's seed: on even attempts with a limit, a node live at the
// first fullest slot of the incumbent; otherwise any node.
int RegionNeighbourhood::seed_node(NeighbourhoodContext& context, int attempt) const {
  const int n = static_cast<int>(context.folded.kernel.nodes.size());
  int seed = static_cast<int>(context.rng() % n);
  const UsageProfile& profile = context.incumbent.profile();
  if (attempt % 2 == 0 && context.folded.usage_limit && profile.slots() > 0) {
    const int peak = profile.first_above(0, profile.slots(), profile.max() - 1);
    const std::vector<int> live = context.incumbent.covering(peak);
    if (!live.empty()) seed = live[context.rng() % live.size()];
  }
  return seed;
}

NeighbourhoodOutcome RegionNeighbourhood::apply(NeighbourhoodContext& context) {
  NeighbourhoodOutcome out;
  if (!context.have_incumbent || context.folded.kernel.nodes.empty()) {
    out.skipped = true;
    return out;
  }
  const int n = static_cast<int>(context.folded.kernel.nodes.size());
  for (int a = 0; a < attempts_ && !out_of_time(context); ++a) {
    const int seed = seed_node(context, a);
    const auto region = grow_region(context.folded.kernel, context.incumbent.incidences(), seed, region_size_, context.rng);
    const RegionOutcome r = improve_region(context.incumbent, region, kRlimit, context.deadline);
    out.work += static_cast<long>(region.size()) * std::max(1, r.checks);
    if (r.improved) out.improved = context.offer(context.incumbent.assignment(), true) || out.improved;
    if (r.proven && static_cast<int>(region.size()) == n) {
      out.proven = true;
      out.proven_cost = r.cost;
      return out;
    }
    region_size_ = r.proven ? std::min(region_size_ + std::max(1, region_size_ / 4), 400) : std::max(4, region_size_ * 4 / 5);
  }
  return out;
}

}  // namespace shardsynth::synth
