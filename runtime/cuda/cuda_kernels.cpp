#include "runtime/cuda/cuda_kernels.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/cuda/cublas_gemm.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/elementwise.hpp"
#include "runtime/cuda/gpu_entries.hpp"
#include "runtime/fp32_operands.hpp"
#include "runtime/half.hpp"
#include "runtime/kernels.hpp"

namespace shardsynth::runtime::cuda {
namespace {

// linear / conv1d (runtime/kernels.hpp): x[..., k] times a [k, n] weight, or
// with `weight_out_in` an [n, k] one transposed, plus bias[n].
Tensor projection(const Tensor& x, const Tensor& weight, const Tensor* bias, bool weight_out_in) {
  if (x.holds_bits() != weight.holds_bits() || (x.holds_bits() && x.dtype != weight.dtype)) {
    // Operands of different dtypes: both widened to fp32, fp32 GEMM.
    return projection(widened(x), widened(weight), bias, weight_out_in);
  }
  if (x.rank() < 1 || weight.rank() != 2) throw std::invalid_argument("projection: bad operand ranks");
  const int64_t k = x.shape.back();
  const int64_t n = weight_out_in ? weight.shape[0] : weight.shape[1];
  const int64_t wk = weight_out_in ? weight.shape[1] : weight.shape[0];
  if (wk != k || (bias && (bias->rank() != 1 || bias->shape[0] != n))) {
    throw std::invalid_argument("projection: x does not fit weight / bias");
  }
  std::vector<int64_t> out_shape = x.shape;
  out_shape.back() = n;
  Tensor out = zeros(out_shape);
  int64_t rows = 1;  // product of x's leading dims
  for (int d = 0; d + 1 < x.rank(); ++d) rows *= x.shape[d];
  if (rows == 0 || n == 0) return out;
  DeviceBuffer dout(out.data);  // starts at zero
  if (k > 0 && x.holds_bits()) {
    // 16-bit operands: their 16-bit storage is uploaded as it is; cuBLAS accumulates in fp32.
    const DeviceHalfBuffer dx(x.bits), dw(weight.bits);
    device_gemm_half(dx.data(), false, dw.data(), weight_out_in, dout.data(), rows, n, k, x.dtype);
  } else if (k > 0) {
    DeviceBuffer dx(x.data), dw(weight.data);
    device_gemm(dx.data(), false, dw.data(), weight_out_in, dout.data(), rows, n, k);
  }
  if (bias) {
    const Tensor fp32_bias = widened(*bias);  // n elements: widened on the host
    DeviceBuffer db(fp32_bias.data);
    SHARDSYNTH_CUDA_CHECK(launch_add_bias(dout.data(), db.data(), rows, n));
    dout.download(out.data);
    return out;
  }
  dout.download(out.data);
  return out;
}

// device_matmul on 16-bit operands (runtime/half.hpp): their 16-bit storage
// is uploaded as it is and cuBLAS accumulates in fp32; the result is fp32.
Tensor device_matmul_half(const Tensor& a, const Tensor& b, const MatmulPlan& plan, int64_t sa, int64_t sb) {
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  const int64_t batches = static_cast<int64_t>(plan.a_index.size());
  Tensor out = zeros(plan.out_shape);
  const DeviceHalfBuffer da(a.bits), db(b.bits);
  DeviceBuffer dout(out.data.size());
  if (sa >= 0 && sb >= 0) {
    device_gemm_half_batched(da.data(), false, sa * m * k, db.data(), false, sb * k * n, dout.data(), m * n, m, n, k,
                             batches, a.dtype);
  } else {
    for (int64_t t = 0; t < batches; ++t) {
      device_gemm_half(da.data() + plan.a_index[t] * m * k, false, db.data() + plan.b_index[t] * k * n, false,
                       dout.data() + t * m * n, m, n, k, a.dtype);
    }
  }
  dout.download(out.data);
  return out;
}

Tensor device_matmul(const Tensor& a, const Tensor& b) {
  if (a.holds_bits() != b.holds_bits() || (a.holds_bits() && a.dtype != b.dtype)) return device_matmul(widened(a), widened(b));
  const MatmulPlan plan = plan_matmul(a.shape, b.shape);
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  const auto& a_index = plan.a_index;
  const auto& b_index = plan.b_index;
  const int64_t batches = static_cast<int64_t>(a_index.size());
  Tensor out = zeros(plan.out_shape);
  if (batches == 0 || m == 0 || n == 0 || k == 0) return out;
  const int64_t sa = regular_stride(a_index), sb = regular_stride(b_index);
  if (a.holds_bits()) return device_matmul_half(a, b, plan, sa, sb);
  DeviceBuffer da(a.data), db(b.data), dout(out.data.size());
  if (sa >= 0 && sb >= 0) {
    device_gemm_batched(da.data(), false, sa * m * k, db.data(), false, sb * k * n, dout.data(), m * n, m, n, k, batches);
  } else {
    for (int64_t t = 0; t < batches; ++t) {
      device_gemm(da.data() + a_index[t] * m * k, false, db.data() + b_index[t] * k * n, false, dout.data() + t * m * n,
                  m, n, k);
    }
  }
  dout.download(out.data);
  return out;
}

Tensor device_unary(UnaryOp op, const Tensor& x, float divisor = 1.0f) {
  Tensor out = zeros(x.shape);
  if (x.data.empty()) return out;
  DeviceBuffer dx(x.data), dy(x.data.size());
  SHARDSYNTH_CUDA_CHECK(launch_unary(op, dx.data(), dy.data(), x.numel(), divisor));
  dy.download(out.data);
  return out;
}

// An elementwise kernel of two same-shape operands; other shapes (broadcasting) run `cpu`.
using BinaryLauncher = cudaError_t (*)(const float*, const float*, float*, int64_t);
Tensor device_binary(BinaryLauncher launch, const KernelCall& c, const KernelFn& cpu) {
  const Tensor& a = input(c, 0);
  const Tensor& b = input(c, 1);
  if (a.shape != b.shape) return cpu(c);
  Tensor out = zeros(a.shape);
  if (a.data.empty()) return out;
  DeviceBuffer da(a.data), db(b.data), dy(a.data.size());
  SHARDSYNTH_CUDA_CHECK(launch(da.data(), db.data(), dy.data(), a.numel()));
  dy.download(out.data);
  return out;
}

Tensor device_causal_mask(const Tensor& x, int64_t q_offset, int64_t k_offset) {
  if (x.rank() < 2) throw std::invalid_argument("causal_mask: needs scores of rank >= 2");
  const int64_t q = x.shape[x.rank() - 2], k = x.shape.back();
  const int64_t mats = q * k == 0 ? 0 : x.numel() / (q * k);
  Tensor out = x;
  if (mats == 0) return out;
  DeviceBuffer dx(x.data);
  SHARDSYNTH_CUDA_CHECK(launch_causal_mask(dx.data(), mats, q, k, q_offset, k_offset));
  dx.download(out.data);
  return out;
}

std::map<std::string, KernelFn> build_gpu_kernels() {
  using C = const KernelCall&;
  const auto& cpu = reference_kernels();
  return {
      {"linear",
       [](C c) {
         const Tensor* w = optional_param(c, "weight");
         if (!w) throw std::invalid_argument("node '" + c.node.name + "' (linear) lacks param 'weight'");
         return projection(input(c, 0), *w, optional_param(c, "bias"), true);
       }},
      {"conv1d",
       [](C c) {
         const Tensor* w = optional_param(c, "weight");
         if (!w) throw std::invalid_argument("node '" + c.node.name + "' (conv1d) lacks param 'weight'");
         return projection(input(c, 0), *w, optional_param(c, "bias"), false);
       }},
      {"matmul", [](C c) { return device_matmul(input(c, 0), input(c, 1)); }},
      {"gelu", [](C c) { return device_unary(UnaryOp::gelu, input(c, 0)); }},
      {"gelu_tanh", [](C c) { return device_unary(UnaryOp::gelu_tanh, input(c, 0)); }},
      {"relu", [](C c) { return device_unary(UnaryOp::relu, input(c, 0)); }},
      {"scale",
       [](C c) {
         const auto it = c.node.real_attrs.find("divisor");
         if (it == c.node.real_attrs.end()) {
           throw std::invalid_argument("node '" + c.node.name + "' (scale) lacks real attribute 'divisor'");
         }
         if (it->second == 0) throw std::invalid_argument("scale: divisor is 0");
         return device_unary(UnaryOp::scale, input(c, 0), static_cast<float>(it->second));
       }},
      {"silu", [](C c) { return device_unary(UnaryOp::silu, input(c, 0)); }},
      {"add", [add_cpu = cpu.at("add")](C c) { return device_binary(launch_add, c, add_cpu); }},
      {"mul", [mul_cpu = cpu.at("mul")](C c) { return device_binary(launch_mul, c, mul_cpu); }},
      {"causal_mask",
       [](C c) {
         const auto& o = c.in_offsets;
         return o.size() < 2 ? device_causal_mask(input(c, 0), 0, 0)
                             : device_causal_mask(input(c, 0), o[o.size() - 2], o[o.size() - 1]);
       }},
  };
}

}  // namespace

const std::map<std::string, KernelFn>& gpu_kernels() {
  // The GEMMs upload 16-bit storage themselves; every other GPU entry reads fp32.
  static const std::map<std::string, KernelFn> table =
      with_fp32_operands(build_gpu_kernels(), {"linear", "conv1d", "matmul"});
  return table;
}

const std::map<std::string, KernelFn>& cuda_kernels() {
  static const auto table = with_gpu_entries(reference_kernels(), gpu_kernels());
  return table;
}

}  // namespace shardsynth::runtime::cuda
