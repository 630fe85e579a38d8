#pragma once
// Helpers shared by the MPI tests: the meshes to try for the world size and a
// deterministic global tensor every rank builds identically.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "runtime/tensor.hpp"

namespace shardsynth::runtime::testing {

inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// The mesh shapes to test on: {N}, and {2, N/2} when N >= 4 and even.
inline std::vector<std::vector<int64_t>> test_meshes() {
  const int n = world_size();
  std::vector<std::vector<int64_t>> meshes = {{n}};
  if (n >= 4 && n % 2 == 0) meshes.push_back({2, n / 2});
  return meshes;
}

// A tensor of `shape` with small integer values (sums stay exact in fp32),
// different for each `seed`.
inline Tensor global_tensor(const std::vector<int64_t>& shape, int seed) {
  Tensor t = zeros(shape);
  for (std::size_t i = 0; i < t.data.size(); ++i) {
    t.data[i] = static_cast<float>(static_cast<int64_t>((i * 7 + static_cast<std::size_t>(seed) * 13) % 101) - 50);
  }
  return t;
}

inline Tensor scaled(Tensor t, float factor) {
  for (float& x : t.data) x *= factor;
  return t;
}

}  // namespace shardsynth::runtime::testing
