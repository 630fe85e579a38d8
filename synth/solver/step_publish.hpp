#pragma once
// Adding a step or a bound to a CegisResult as it happens, for the phases
// around the exact loop (anytime_phase.cpp, anytime_network.cpp).
#include <cstdint>
#include <utility>

#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// Numbers `it` as the next step of `result`, appends it and hands it to `on_iteration`.
inline void publish_step(Iteration it, const IterationCallback& on_iteration, CegisResult& result) {
  it.index = static_cast<int>(result.iterations.size());
  result.iterations.push_back(std::move(it));
  if (on_iteration) on_iteration(result.iterations.back());
}

// Raises the result's lower bound and publishes the rise at once, so that a
// search abandoned at the deadline (time_guard.hpp) still reports it.
inline void raise_result_bound(int64_t bound, const BoundCallback& on_bound, CegisResult& result) {
  if (bound <= result.lower_bound || bound >= kForbidden) return;
  result.lower_bound = bound;
  if (on_bound) on_bound(bound);
}

}  // namespace shardsynth::synth
