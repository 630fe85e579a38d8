#pragma once
// The cuBLAS GEMMs of the CUDA kernel tables (forward, cuda_kernels.cpp;
// backward, cuda_backward.cpp) on row-major fp32 (or 16-bit) device matrices, with the
// per-thread handle they share. Every call is checked (cuda_check.hpp).
#include <cublas_v2.h>

#include <cstdint>
#include <vector>

#include "ir/dtype.hpp"

namespace shardsynth::runtime::cuda {

// This thread's cuBLAS handle on the current device, created on first use.
cublasHandle_t blas();

// `v` as a cuBLAS int; throws std::length_error above 2^31 - 1.
int to_int(int64_t v);

// C[m, n] = op(A) . op(B) + beta C on device memory, where op(A) is A[m, k]
// or, with `a_transposed`, A[k, m]^T, and op(B) is B[k, n] or, with
// `b_transposed`, B[n, k]^T (runtime/cpu_gemm.hpp's contract). m, n, k > 0.
void device_gemm(const float* a, bool a_transposed, const float* b, bool b_transposed, float* c, int64_t m, int64_t n,
                 int64_t k, float beta = 0.0f);

// `batches` products as device_gemm, matrix t reading a + t * a_stride and
// b + t * b_stride (elements; 0 = the same matrix for every t) and writing
// c + t * c_stride. m, n, k, batches > 0.
void device_gemm_batched(const float* a, bool a_transposed, int64_t a_stride, const float* b, bool b_transposed,
                         int64_t b_stride, float* c, int64_t c_stride, int64_t m, int64_t n, int64_t k,
                         int64_t batches, float beta = 0.0f);

// The same products on 16-bit operands: A and B hold bfloat16 or float16
// patterns (`dtype`), C is fp32, and cuBLAS accumulates in fp32
// (cublasGemmEx / cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F), as
// PyTorch's CUDA matmul does before it rounds the result to the dtype (the
// forward pass rounds it, runtime/half.hpp). Throws std::invalid_argument
// for a dtype that is not 16-bit.
void device_gemm_half(const uint16_t* a, bool a_transposed, const uint16_t* b, bool b_transposed, float* c, int64_t m,
                      int64_t n, int64_t k, ir::DType dtype);
void device_gemm_half_batched(const uint16_t* a, bool a_transposed, int64_t a_stride, const uint16_t* b,
                              bool b_transposed, int64_t b_stride, float* c, int64_t c_stride, int64_t m, int64_t n,
                              int64_t k, int64_t batches, ir::DType dtype);

// The matrix stride s with index[t] == t * s for every t (0 when every t reads
// matrix 0), or -1 when the indices of a MatmulPlan are not so regular.
int64_t regular_stride(const std::vector<int64_t>& index);

}  // namespace shardsynth::runtime::cuda
