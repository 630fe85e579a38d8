#pragma once
// The one OpenBLAS GEMM call of the CPU kernels (forward, kernels_dense.cpp,
// and backward, kernels_backward_dense.cpp), on row-major fp32 matrices.
#include <cstdint>

#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// C[m, n] = op(A) . op(B) + beta C, where op(A) is A[m, k] or, with
// `a_transposed`, A[k, m]^T, and op(B) is B[k, n] or, with `b_transposed`,
// B[n, k]^T. With k == 0 the product is zero (C becomes beta C). The
// leading dims (elements between rows as stored) default, at 0, to the
// packed ones; a tile of a wider matrix passes its matrix's.
void cpu_gemm(const float* a, bool a_transposed, const float* b, bool b_transposed, float* c, int64_t m, int64_t n,
              int64_t k, float beta = 0.0f, int64_t lda = 0, int64_t ldb = 0, int64_t ldc = 0);

// C[m, n] = A[m, k] . op(W) for a weight matrix W: op(W) is W [k, n] or,
// with `w_transposed`, W [n, k]^T. W is read in tiles of C's columns
// through the widening loader (runtime/half.hpp's fp32_block): a 16-bit W
// is widened a tile at a time, never whole, and every element of C is still
// one dot product over the whole k (the summation of one GEMM); an fp32 W
// is one tile read in place.
void cpu_gemm_weight(const float* a, int64_t m, const Tensor& w, bool w_transposed, float* c);

}  // namespace shardsynth::runtime
