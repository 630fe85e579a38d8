#pragma once
// The end-to-end grids of real runs: every (mesh, model, synth options)
// case, half of them under the sanitizers (testing::sampled).
#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "sanitized.hpp"

namespace shardsynth::testing {

// One case of an end-to-end grid.
struct RunCase {
  int ranks = 0;                // MPI ranks
  const char* mesh = nullptr;   // synth's --mesh
  const char* model = nullptr;  // the model and its flags
  const char* options = "";     // more synth flags
};

// Runs body(c) for every (mesh, model, options) case of the grid, half of
// them under the sanitizers (sampled()), with the case captured for failures.
template <class Body>
void for_each_run_case(const std::vector<std::pair<int, const char*>>& meshes, const std::vector<const char*>& models,
                       const std::vector<const char*>& option_sets, Body body) {
  for_each_sampled(static_cast<int>(meshes.size()), static_cast<int>(models.size()), static_cast<int>(option_sets.size()),
                   [&](int m, int g, int o) {
                     const RunCase c{meshes[m].first, meshes[m].second, models[g], option_sets[o]};
                     CAPTURE(c.mesh);
                     CAPTURE(c.model);
                     CAPTURE(c.options);
                     body(c);
                   });
}

}  // namespace shardsynth::testing
