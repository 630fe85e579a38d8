#pragma once
// The "cuda" backend of runtime/backend.hpp: cuBLAS and CUDA kernels with CPU
// fallbacks (cuda_kernels.hpp) and NCCL collectives bootstrapped over MPI
// (nccl_communicator.hpp). Built only when CMake found the CUDA toolkit and
// NCCL (SHARDSYNTH_HAVE_CUDA); running it needs one GPU per rank.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/communicator.hpp"
#include "runtime/reference.hpp"

namespace shardsynth::runtime::cuda {

// op kind -> kernel, for every kind reference_kernels() has.
const std::map<std::string, KernelFn>& cuda_kernels();

// This rank's NcclCommunicator on `mesh_shape` (MPI must be initialized);
// selects this rank's GPU first.
std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<int64_t>& mesh_shape);

}  // namespace shardsynth::runtime::cuda
