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

// The region: on even attempts with a limit, a window around a tight slot
// (tight_window); otherwise one cluster around any node.
std::vector<int> choose_region(NeighbourhoodContext& context, std::mt19937_64& rng, int attempt, int size) {
  std::vector<int> region =
      attempt % 2 == 0 ? tight_window(context.folded, context.incumbent, size, rng) : std::vector<int>{};
  if (!region.empty()) return region;
  const Problem& kernel = context.folded.kernel;
  const int n = static_cast<int>(kernel.nodes.size());
  return grow_region(kernel, context.incumbent.incidences(), static_cast<int>(rng() % n), size, rng);
}

}  // namespace

std::vector<int> tight_window(const FoldedProblem& folded, LocalSearch& incumbent, int size, std::mt19937_64& rng) {
  const UsageProfile& profile = incumbent.profile();
  if (!folded.usage_limit || profile.slots() == 0) return {};
  const std::vector<int64_t> usage = profile.values();
  const auto tight_from = static_cast<int64_t>(static_cast<long double>(*folded.usage_limit) * kTightShare);
  std::vector<int> tight;
  for (int slot = 0; slot < static_cast<int>(usage.size()); ++slot) {
    if (usage[slot] >= tight_from) tight.push_back(slot);
  }
  const int slot = tight.empty() ? profile.first_above(0, profile.slots(), profile.max() - 1)
                                 : tight[rng() % tight.size()];
  std::vector<int> seeds = incumbent.covering(slot);
  if (seeds.empty()) return {};
  std::shuffle(seeds.begin(), seeds.end(), rng);
  seeds.resize(std::min<std::size_t>(seeds.size(), static_cast<std::size_t>(std::max(1, size / 2))));
  return grow_region(folded.kernel, incumbent.incidences(), seeds, size, rng);
}

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
