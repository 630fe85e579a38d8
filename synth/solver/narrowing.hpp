#pragma once
// What Z3 sees for "cost < bound" in the exact loop: the kernel pruned at
// the gap between the bound and its proven lower bound (dual_bound.hpp's
// prune_at_gap) and reduced again, then, while that lets the bound rise,
// reparameterized, pruned and reduced once more (at most three rounds).
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "synth/solver/problem.hpp"
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/reduction.hpp"

namespace shardsynth::synth {

struct Narrowed {
  std::vector<Reduced> chain;  // the reductions applied after the kernel, in order
  Problem problem;             // the last one's kernel (costs reparameterized)
  int64_t constant = 0;        // original cost = constant + problem cost, for every problem assignment
  bool empty = false;          // nothing cheaper than the bound survives
};

// Narrows `kernel` (original cost = offset + kernel cost) for "cost <
// bound": first by the LP's reduced costs when `lp` is given
// (reduced_cost_fixing.hpp), then as above. Without a bound, or with
// `prune` off, the kernel is returned as it is.
Narrowed narrow(const Problem& kernel, int64_t offset, std::optional<int64_t> bound, bool prune,
                std::optional<std::chrono::steady_clock::time_point> deadline, const LpRelaxation* lp = nullptr);

// Expands an assignment of the narrowed problem back through its chain.
Assignment expand_narrowed(const Narrowed& narrowed, Assignment kernel_assignment);

}  // namespace shardsynth::synth
