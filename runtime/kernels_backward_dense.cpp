#include <algorithm>
#include <stdexcept>
#include <string>

#include "ir/tensor.hpp"
#include "runtime/cpu_gemm.hpp"
#include "runtime/half.hpp"
#include "runtime/kernels.hpp"
#include "runtime/kernels_backward.hpp"

namespace shardsynth::runtime {
namespace {

// Throws unless `dy` has the shape the forward produced.
void expect_grad_shape(const char* kind, const Tensor& dy, const std::vector<int64_t>& out_shape) {
  if (dy.shape != out_shape) {
    throw std::invalid_argument(std::string(kind) + " backward: output gradient " + ir::shape_string(dy.shape) +
                                " is not the output's shape " + ir::shape_string(out_shape));
  }
}

// Shared by linear and conv1d: x[..., k] and a weight [n, k] (`weight_out_in`) or [k, n].
ProjectionGrads projection_backward(const char* kind, const Tensor& x, const Tensor& weight, bool has_bias,
                                    const Tensor& dy, bool weight_out_in) {
  if (x.rank() < 1 || weight.rank() != 2) {
    throw std::invalid_argument(std::string(kind) + " backward: bad shapes x " + ir::shape_string(x.shape) +
                                ", weight " + ir::shape_string(weight.shape));
  }
  const int64_t k = x.shape.back();
  const int64_t n = weight_out_in ? weight.shape[0] : weight.shape[1];
  if ((weight_out_in ? weight.shape[1] : weight.shape[0]) != k) {
    throw std::invalid_argument(std::string(kind) + " backward: x " + ir::shape_string(x.shape) +
                                " does not fit weight " + ir::shape_string(weight.shape));
  }
  std::vector<int64_t> out_shape = x.shape;
  out_shape.back() = n;
  expect_grad_shape(kind, dy, out_shape);
  int64_t rows = 1;  // product of x's leading dims
  for (int d = 0; d + 1 < x.rank(); ++d) rows *= x.shape[d];
  ProjectionGrads grads{zeros(x.shape), zeros(weight.shape), std::nullopt};
  const float* g = dy.data.data();
  // dx = dy . W for linear's [n, k] weight, dy . W^T for conv1d's [k, n]; a 16-bit weight read by tiles.
  cpu_gemm_weight(g, rows, weight, !weight_out_in, grads.x.data.data());
  if (weight_out_in) {
    cpu_gemm(g, true, x.data.data(), false, grads.weight.data.data(), n, k, rows);   // dy^T . x
  } else {
    cpu_gemm(x.data.data(), true, g, false, grads.weight.data.data(), k, n, rows);   // x^T . dy
  }
  if (has_bias) {
    std::vector<double> sum(n, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) sum[j] += g[r * n + j];
    }
    Tensor bias = zeros({n});
    for (int64_t j = 0; j < n; ++j) bias.data[j] = static_cast<float>(sum[j]);
    grads.bias = std::move(bias);
  }
  return grads;
}

}  // namespace

ProjectionGrads linear_backward(const Tensor& x, const Tensor& weight, bool has_bias, const Tensor& dy) {
  return projection_backward("linear", x, weight, has_bias, dy, true);
}

ProjectionGrads conv1d_backward(const Tensor& x, const Tensor& weight, bool has_bias, const Tensor& dy) {
  return projection_backward("conv1d", x, weight, has_bias, dy, false);
}

PairGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dy) {
  const MatmulPlan plan = plan_matmul(a.shape, b.shape);
  expect_grad_shape("matmul", dy, plan.out_shape);
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  PairGrads grads{zeros(a.shape), zeros(b.shape)};
  // A broadcast operand's matrix is read by several products: its gradient
  // accumulates (beta 1) over all of them.
  for (std::size_t t = 0; t < plan.a_index.size(); ++t) {
    const float* g = dy.data.data() + t * m * n;
    const int64_t ai = plan.a_index[t], bi = plan.b_index[t];
    cpu_gemm(g, false, b.data.data() + bi * k * n, true, grads.a.data.data() + ai * m * k, m, k, n, 1.0f);
    cpu_gemm(a.data.data() + ai * m * k, true, g, false, grads.b.data.data() + bi * k * n, k, n, m, 1.0f);
  }
  return grads;
}

Tensor embedding_backward(const Tensor& ids, const std::vector<int64_t>& weight_shape, int64_t offset,
                          const Tensor& dy) {
  if (weight_shape.size() != 2) {
    throw std::invalid_argument("embedding backward: weight " + ir::shape_string(weight_shape) + " is not 2-D");
  }
  const int64_t rows = weight_shape[0], d = weight_shape[1];
  std::vector<int64_t> out_shape = ids.shape;
  out_shape.push_back(d);
  expect_grad_shape("embedding", dy, out_shape);
  Tensor grad = zeros(weight_shape);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t local = static_cast<int64_t>(ids.data[i]) - offset;
    if (local < 0 || local >= rows) continue;
    for (int64_t j = 0; j < d; ++j) grad.data[local * d + j] += dy.data[i * d + j];
  }
  return grad;
}

}  // namespace shardsynth::runtime
