#pragma once
// Backends by name: the kernels that run ops on local shards and the
// communicator that moves shards between ranks (and, for training, the
// backward kernels of runtime/backward.hpp). "cpu" (plain kernels with
// OpenBLAS, MPI) is always built; "cuda" (cuBLAS and CUDA kernels, NCCL
// bootstrapped over MPI) when CMake found the CUDA toolkit and NCCL.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backward.hpp"
#include "runtime/communicator.hpp"
#include "runtime/reference.hpp"

namespace shardsynth::runtime {

struct Backend {
  std::string name;                                   // "cpu" or "cuda"
  const std::map<std::string, KernelFn>* kernels;     // op kind -> kernel on local shards
  const std::map<std::string, BackwardFn>* backward;  // op kind -> backward kernel on local shards
  std::unique_ptr<Communicator> comm;                 // this rank's communicator on the mesh
};

// The backends this build has, in order.
std::vector<std::string> backend_names();
// Creates the named backend for `mesh_shape` (MPI must be initialized).
// Throws ir::InputError naming an unknown or unbuilt backend.
Backend make_backend(std::string_view name, const std::vector<int64_t>& mesh_shape);

}  // namespace shardsynth::runtime
