#include "runtime/cuda/cublas_gemm.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "runtime/cuda/cuda_check.hpp"

namespace shardsynth::runtime::cuda {
namespace {

// cuBLAS is column-major: a row-major C[m, n] is a column-major C^T[n, m], so
// each call computes C^T = op(B)^T . op(A)^T with the operands swapped. A
// row-major X[r, c] has leading dimension c either way.
struct ColumnMajorOps {
  cublasOperation_t a_op;  // operation on A (the right factor of C^T)
  cublasOperation_t b_op;  // operation on B (the left factor of C^T)
  int lda;                 // leading dimension of A as stored
  int ldb;                 // leading dimension of B as stored
};

ColumnMajorOps column_major(bool a_transposed, bool b_transposed, int64_t m, int64_t n, int64_t k) {
  return {a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N, b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N,
          to_int(a_transposed ? m : k), to_int(b_transposed ? k : n)};
}

cudaDataType_t cuda_type(ir::DType dtype) {
  if (dtype == ir::DType::bfloat16) return CUDA_R_16BF;
  if (dtype == ir::DType::float16) return CUDA_R_16F;
  throw std::invalid_argument("a 16-bit GEMM of " + ir::dtype_name(dtype) + " operands");
}

}  // namespace

cublasHandle_t blas() {
  struct Handle {
    cublasHandle_t h = nullptr;  // the handle, created in the constructor
    Handle() { SHARDSYNTH_CUBLAS_CHECK(cublasCreate(&h)); }
    ~Handle() { cublasDestroy(h); }
  };
  thread_local Handle handle;
  return handle.h;
}

int to_int(int64_t v) {
  if (v > std::numeric_limits<int>::max()) throw std::length_error("cuBLAS dimension above 2^31");
  return static_cast<int>(v);
}

void device_gemm(const float* a, bool a_transposed, const float* b, bool b_transposed, float* c, int64_t m, int64_t n,
                 int64_t k, float beta) {
  const ColumnMajorOps ops = column_major(a_transposed, b_transposed, m, n, k);
  const float alpha = 1.0f;
  SHARDSYNTH_CUBLAS_CHECK(cublasSgemm(blas(), ops.b_op, ops.a_op, to_int(n), to_int(m), to_int(k), &alpha, b, ops.ldb,
                                      a, ops.lda, &beta, c, to_int(n)));
}

void device_gemm_batched(const float* a, bool a_transposed, int64_t a_stride, const float* b, bool b_transposed,
                         int64_t b_stride, float* c, int64_t c_stride, int64_t m, int64_t n, int64_t k,
                         int64_t batches, float beta) {
  const ColumnMajorOps ops = column_major(a_transposed, b_transposed, m, n, k);
  const float alpha = 1.0f;
  SHARDSYNTH_CUBLAS_CHECK(cublasSgemmStridedBatched(blas(), ops.b_op, ops.a_op, to_int(n), to_int(m), to_int(k), &alpha,
                                                    b, ops.ldb, b_stride, a, ops.lda, a_stride, &beta, c, to_int(n),
                                                    c_stride, to_int(batches)));
}

void device_gemm_half(const uint16_t* a, bool a_transposed, const uint16_t* b, bool b_transposed, float* c, int64_t m,
                      int64_t n, int64_t k, ir::DType dtype) {
  const ColumnMajorOps ops = column_major(a_transposed, b_transposed, m, n, k);
  const cudaDataType_t type = cuda_type(dtype);
  const float alpha = 1.0f, beta = 0.0f;
  SHARDSYNTH_CUBLAS_CHECK(cublasGemmEx(blas(), ops.b_op, ops.a_op, to_int(n), to_int(m), to_int(k), &alpha, b, type,
                                       ops.ldb, a, type, ops.lda, &beta, c, CUDA_R_32F, to_int(n), CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT));
}

void device_gemm_half_batched(const uint16_t* a, bool a_transposed, int64_t a_stride, const uint16_t* b,
                              bool b_transposed, int64_t b_stride, float* c, int64_t c_stride, int64_t m, int64_t n,
                              int64_t k, int64_t batches, ir::DType dtype) {
  const ColumnMajorOps ops = column_major(a_transposed, b_transposed, m, n, k);
  const cudaDataType_t type = cuda_type(dtype);
  const float alpha = 1.0f, beta = 0.0f;
  SHARDSYNTH_CUBLAS_CHECK(cublasGemmStridedBatchedEx(blas(), ops.b_op, ops.a_op, to_int(n), to_int(m), to_int(k), &alpha,
                                                     b, type, ops.ldb, b_stride, a, type, ops.lda, a_stride, &beta, c,
                                                     CUDA_R_32F, to_int(n), c_stride, to_int(batches),
                                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

int64_t regular_stride(const std::vector<int64_t>& index) {
  const int64_t batches = static_cast<int64_t>(index.size());
  const int64_t stride = batches > 1 ? index[1] : 0;
  for (int64_t t = 0; t < batches; ++t) {
    if (index[t] != t * stride) return -1;
  }
  return stride;
}

}  // namespace shardsynth::runtime::cuda
