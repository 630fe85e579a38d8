#include "runtime/backend.hpp"

#include "ir/error.hpp"
#include "runtime/mpi_communicator.hpp"
#ifdef SHARDSYNTH_HAVE_CUDA
#include "runtime/cuda/cuda_backend.hpp"
#include "runtime/cuda/cuda_backward.hpp"
#endif

namespace shardsynth::runtime {

std::vector<std::string> backend_names() {
#ifdef SHARDSYNTH_HAVE_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

Backend make_backend(std::string_view name, const std::vector<int64_t>& mesh_shape) {
  if (name == "cpu") {
    return {"cpu", &reference_kernels(), &reference_backward_kernels(), std::make_unique<MpiCommunicator>(mesh_shape)};
  }
#ifdef SHARDSYNTH_HAVE_CUDA
  if (name == "cuda") {
    return {"cuda", &cuda::cuda_kernels(), &cuda::cuda_backward_kernels(), cuda::make_nccl_communicator(mesh_shape)};
  }
#endif
  std::string known;
  for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
  throw ir::InputError("backend '" + std::string(name) + "' is not built (this build has: " + known + ")");
}

}  // namespace shardsynth::runtime
