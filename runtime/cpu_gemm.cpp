#include "runtime/cpu_gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <vector>

#include "runtime/half.hpp"

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

void cpu_gemm_weight(const float* a, int64_t m, const Tensor& w, bool w_transposed, float* c) {
  const int64_t k = w.shape.at(w_transposed ? 1 : 0), n = w.shape.at(w_transposed ? 0 : 1);
  if (n == 0) return;
  if (k == 0) {
    cpu_gemm(a, false, nullptr, w_transposed, c, m, n, 0);  // C = 0
    return;
  }
  // A tile of C's columns is rows of W (transposed) or columns of W.
  const int64_t tile = widen_tile(w, n, k);
  std::vector<float> scratch;
  for (int64_t first = 0; first < n; first += tile) {
    const int64_t count = std::min(tile, n - first);
    const Fp32Block b = w_transposed ? fp32_block(w, first, count, 0, k, scratch) : fp32_block(w, 0, k, first, count, scratch);
    cpu_gemm(a, false, b.data, w_transposed, c + first, m, count, k, 0.0f, k, b.ld, n);
  }
}

}  // namespace shardsynth::runtime
