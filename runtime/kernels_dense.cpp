#include <algorithm>
#include <stdexcept>
#include <string>

#include "runtime/cpu_gemm.hpp"
#include "runtime/half.hpp"
#include "runtime/kernels.hpp"

namespace shardsynth::runtime {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Shared by linear and conv1d: x[..., k] times a [k, n] (or [n, k]^T) weight plus bias.
Tensor projection(const char* kind, const Tensor& x, const Tensor& weight, const Tensor* bias, bool weight_out_in) {
  if (x.rank() < 1 || weight.rank() != 2) {
    throw std::invalid_argument(std::string(kind) + ": bad shapes x " + shape_text(x.shape) + ", weight " +
                                shape_text(weight.shape));
  }
  const int64_t k = x.shape.back();
  const int64_t n = weight_out_in ? weight.shape[0] : weight.shape[1];
  const int64_t wk = weight_out_in ? weight.shape[1] : weight.shape[0];
  if (wk != k || (bias && (bias->rank() != 1 || bias->shape[0] != n))) {
    throw std::invalid_argument(std::string(kind) + ": x " + shape_text(x.shape) + " does not fit weight " +
                                shape_text(weight.shape) + (bias ? " / bias " + shape_text(bias->shape) : ""));
  }
  std::vector<int64_t> out_shape = x.shape;
  out_shape.back() = n;
  Tensor out = zeros(out_shape);
  int64_t rows = 1;  // product of x's leading dims
  for (int d = 0; d + 1 < x.rank(); ++d) rows *= x.shape[d];
  cpu_gemm_weight(x.data.data(), rows, weight, weight_out_in, out.data.data());  // a 16-bit weight read by tiles
  if (bias) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) out.data[r * n + j] += bias->data[j];
    }
  }
  return out;
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor* bias) {
  return projection("linear", x, weight, bias, true);
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor* bias) {
  return projection("conv1d", x, weight, bias, false);
}

MatmulPlan plan_matmul(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const int a_rank = static_cast<int>(a.size()), b_rank = static_cast<int>(b.size());
  if (a_rank < 2 || b_rank < 2 || a.back() != b[b_rank - 2]) {
    throw std::invalid_argument("matmul: shapes " + shape_text(a) + " and " + shape_text(b) + " do not fit");
  }
  MatmulPlan plan;
  plan.m = a[a_rank - 2];
  plan.k = a.back();
  plan.n = b.back();
  // Broadcast the batch dims, right-aligned.
  const int a_batch = a_rank - 2, b_batch = b_rank - 2;
  const int batch_rank = std::max(a_batch, b_batch);
  std::vector<int64_t> batch(batch_rank), a_ext(batch_rank, 1), b_ext(batch_rank, 1);
  for (int i = 0; i < batch_rank; ++i) {
    const int ai = i - (batch_rank - a_batch), bi = i - (batch_rank - b_batch);
    if (ai >= 0) a_ext[i] = a[ai];
    if (bi >= 0) b_ext[i] = b[bi];
    if (a_ext[i] != b_ext[i] && a_ext[i] != 1 && b_ext[i] != 1) {
      throw std::invalid_argument("matmul: batch dims of " + shape_text(a) + " and " + shape_text(b) + " do not broadcast");
    }
    batch[i] = std::max(a_ext[i], b_ext[i]);
  }
  plan.out_shape = batch;
  plan.out_shape.push_back(plan.m);
  plan.out_shape.push_back(plan.n);
  int64_t batches = 1;
  for (int64_t e : batch) batches *= e;
  std::vector<int64_t> idx(batch_rank, 0);
  for (int64_t t = 0; t < batches; ++t) {
    int64_t a_off = 0, b_off = 0;
    for (int i = 0; i < batch_rank; ++i) {
      a_off = a_off * a_ext[i] + (a_ext[i] == 1 ? 0 : idx[i]);
      b_off = b_off * b_ext[i] + (b_ext[i] == 1 ? 0 : idx[i]);
    }
    plan.a_index.push_back(a_off);
    plan.b_index.push_back(b_off);
    for (int i = batch_rank - 1; i >= 0; --i) {
      if (++idx[i] < batch[i]) break;
      idx[i] = 0;
    }
  }
  return plan;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const MatmulPlan plan = plan_matmul(a.shape, b.shape);
  Tensor out = zeros(plan.out_shape);
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  for (std::size_t t = 0; t < plan.a_index.size(); ++t) {
    cpu_gemm(a.data.data() + plan.a_index[t] * m * k, false, b.data.data() + plan.b_index[t] * k * n, false,
             out.data.data() + t * m * n, m, n, k);
  }
  return out;
}

Tensor embedding(const Tensor& ids, const Tensor& weight, int64_t offset) {
  if (weight.rank() != 2) throw std::invalid_argument("embedding: weight " + shape_text(weight.shape) + " is not 2-D");
  const int64_t rows = weight.shape[0], d = weight.shape[1];
  std::vector<int64_t> out_shape = ids.shape;
  out_shape.push_back(d);
  Tensor out = zeros(out_shape);
  std::vector<float> scratch;  // a 16-bit table's row, widened
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t local = static_cast<int64_t>(ids.data[i]) - offset;
    if (local < 0 || local >= rows) continue;
    const float* row = fp32_block(weight, local, 1, 0, d, scratch).data;  // one row widened, not the table
    std::copy_n(row, d, out.data.begin() + i * d);
  }
  return out;
}

}  // namespace shardsynth::runtime
