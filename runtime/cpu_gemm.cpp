#include "runtime/cpu_gemm.hpp"

#include <cblas.h>

#include <algorithm>

namespace shardsynth::runtime {

void cpu_gemm(const float* a, bool a_transposed, const float* b, bool b_transposed, float* c, int64_t m, int64_t n,
              int64_t k, float beta) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == 0.0f) {
      std::fill(c, c + m * n, 0.0f);
    } else {
      std::for_each(c, c + m * n, [beta](float& v) { v *= beta; });
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, a_transposed ? CblasTrans : CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(a_transposed ? m : k), b, static_cast<int>(b_transposed ? k : n), beta, c,
              static_cast<int>(n));
}

}  // namespace shardsynth::runtime
