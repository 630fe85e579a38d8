#include "runtime/cpu_gemm.hpp"

#include <cblas.h>

#include <algorithm>

namespace shardsynth::runtime {

void cpu_gemm(const float* a, bool a_transposed, const float* b, bool b_transposed, float* c, int64_t m, int64_t n,
              int64_t k, float beta, int64_t lda, int64_t ldb, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (ldc == 0) ldc = n;
  if (k == 0) {
    for (int64_t r = 0; r < m; ++r) {
      float* row = c + r * ldc;
      if (beta == 0.0f) {
        std::fill(row, row + n, 0.0f);
      } else {
        std::for_each(row, row + n, [beta](float& v) { v *= beta; });
      }
    }
    return;
  }
  if (lda == 0) lda = a_transposed ? m : k;
  if (ldb == 0) ldb = b_transposed ? k : n;
  cblas_sgemm(CblasRowMajor, a_transposed ? CblasTrans : CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b,
              static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

}  // namespace shardsynth::runtime
