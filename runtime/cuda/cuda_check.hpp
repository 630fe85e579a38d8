#pragma once
// Checks for every CUDA, cuBLAS and NCCL call of the CUDA backend:
//   SHARDSYNTH_CUDA_CHECK(call)    call returns cudaError_t;
//   SHARDSYNTH_CUBLAS_CHECK(call)  call returns cublasStatus_t;
//   SHARDSYNTH_NCCL_CHECK(call)    call returns ncclResult_t.
// On failure each prints file:line, the call and the library's error string
// (cudaGetErrorString, cublasGetStatusName/String, ncclGetErrorString) to
// stderr and aborts the job: MPI_Abort on MPI_COMM_WORLD while MPI is
// initialized and not finalized, else std::abort.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

namespace shardsynth::runtime::cuda {

[[noreturn]] inline void cuda_check_failed(const char* library, const char* error, const char* call, const char* file,
                                           int line) {
  std::fprintf(stderr, "%s:%d: %s failed (%s): %s\n", file, line, call, library, error);
  std::fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace shardsynth::runtime::cuda

#define SHARDSYNTH_CUDA_CHECK(call)                                                                           \
  do {                                                                                                        \
    const cudaError_t shardsynth_cuda_code_ = (call);                                                         \
    if (shardsynth_cuda_code_ != cudaSuccess) {                                                               \
      ::shardsynth::runtime::cuda::cuda_check_failed("CUDA", cudaGetErrorString(shardsynth_cuda_code_), #call, \
                                                     __FILE__, __LINE__);                                     \
    }                                                                                                         \
  } while (false)

#define SHARDSYNTH_CUBLAS_CHECK(call)                                                                     \
  do {                                                                                                    \
    const cublasStatus_t shardsynth_cublas_code_ = (call);                                                \
    if (shardsynth_cublas_code_ != CUBLAS_STATUS_SUCCESS) {                                               \
      ::shardsynth::runtime::cuda::cuda_check_failed(cublasGetStatusName(shardsynth_cublas_code_),        \
                                                     cublasGetStatusString(shardsynth_cublas_code_), #call, \
                                                     __FILE__, __LINE__);                                 \
    }                                                                                                     \
  } while (false)

#define SHARDSYNTH_NCCL_CHECK(call)                                                                           \
  do {                                                                                                        \
    const ncclResult_t shardsynth_nccl_code_ = (call);                                                        \
    if (shardsynth_nccl_code_ != ncclSuccess) {                                                               \
      ::shardsynth::runtime::cuda::cuda_check_failed("NCCL", ncclGetErrorString(shardsynth_nccl_code_), #call, \
                                                     __FILE__, __LINE__);                                     \
    }                                                                                                         \
  } while (false)
