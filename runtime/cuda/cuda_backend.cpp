#include "runtime/cuda/cuda_backend.hpp"

#include "runtime/cuda/nccl_communicator.hpp"

namespace shardsynth::runtime::cuda {

std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<int64_t>& mesh_shape) {
  return std::make_unique<NcclCommunicator>(mesh_shape);
}

}  // namespace shardsynth::runtime::cuda
