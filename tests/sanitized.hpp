#pragma once
// Whether this test binary was built with AddressSanitizer (scripts/sanitize,
// the asan preset), and a scale for randomized cross-checks there.
//
// The sanitized suite runs our code several times slower. Its job is to find
// memory and undefined-behaviour errors, which a quarter of the random
// instances of a cross-check still reaches; the plain suite runs them all and
// checks the answers at full size.
#include <initializer_list>

#include "common/sanitizer.hpp"

namespace shardsynth::testing {

#if defined(SHARDSYNTH_ASAN)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// `count` random instances (or a threshold on them) in the plain build, a
// quarter of them (at least one) under the sanitizers.
constexpr int scaled(int count) { return kSanitized ? (count + 3) / 4 : count; }

// A search's time limit, in seconds: `seconds` in the plain build, six times
// as long under the sanitizers, which run the search several times slower
// (and, in the suite, two tests at a time on two cores).
constexpr int search_seconds(int seconds) { return kSanitized ? 6 * seconds : seconds; }

// Whether the case at `indices` of a grid of cases runs: every case in the
// plain build; under the sanitizers, the half whose indices sum to an even
// number, so that every value along each dimension still runs (on a grid
// at least two wide in some other dimension), in half of its combinations.
// For the end-to-end grids of real runs over MPI, which the plain suite runs
// in full, and for lists of cases (the even indices), ordered so that those
// still hold every value that must run.
constexpr bool sampled(std::initializer_list<int> indices) {
  if (!kSanitized) return true;
  int sum = 0;
  for (int i : indices) sum += i;
  return sum % 2 == 0;
}

// Runs body(i, j, k) for the cases of an n0 x n1 x n2 grid that sampled() keeps.
template <class Body>
void for_each_sampled(int n0, int n1, int n2, Body body) {
  for (int i = 0; i < n0; ++i) {
    for (int j = 0; j < n1; ++j) {
      for (int k = 0; k < n2; ++k) {
        if (sampled({i, j, k})) body(i, j, k);
      }
    }
  }
}

}  // namespace shardsynth::testing
