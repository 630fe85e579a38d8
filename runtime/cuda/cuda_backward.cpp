#include "runtime/cuda/cuda_backward.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/tensor.hpp"
#include "runtime/cuda/cublas_gemm.hpp"
#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/cuda/elementwise_backward.hpp"
#include "runtime/cuda/gpu_entries.hpp"
#include "runtime/fp32_operands.hpp"
#include "runtime/gradients.hpp"
#include "runtime/kernel_attrs.hpp"
#include "runtime/kernels.hpp"
#include "runtime/kernels_backward.hpp"

namespace shardsynth::runtime::cuda {
namespace {

// A zero-filled device buffer of `elements` floats.
DeviceBuffer device_zeros(int64_t elements) {
  DeviceBuffer buffer(static_cast<std::size_t>(elements));
  if (elements > 0) SHARDSYNTH_CUDA_CHECK(cudaMemset(buffer.data(), 0, buffer.size() * sizeof(float)));
  return buffer;
}

// linear (`weight_out_in`, weight [n, k]) / conv1d (weight [k, n]) backward;
// the contract of linear_backward / conv1d_backward.
ProjectionGrads projection_backward(const Tensor& x, const Tensor& weight, bool has_bias,
                                    const Tensor& dy, bool weight_out_in) {
  const auto on_cpu = [&] {
    return weight_out_in ? linear_backward(x, weight, has_bias, dy) : conv1d_backward(x, weight, has_bias, dy);
  };
  if (x.rank() < 1 || weight.rank() != 2) return on_cpu();  // the CPU entry throws its message
  const int64_t k = x.shape.back();
  const int64_t n = weight_out_in ? weight.shape[0] : weight.shape[1];
  std::vector<int64_t> out_shape = x.shape;
  out_shape.back() = n;
  const bool fits = (weight_out_in ? weight.shape[1] : weight.shape[0]) == k && dy.shape == out_shape;
  const int64_t rows = k == 0 ? 0 : x.numel() / k;  // product of x's leading dims
  if (!fits || rows == 0 || n == 0 || k == 0) return on_cpu();
  DeviceBuffer dx(x.data), dw(weight.data), dg(dy.data), gx(x.data.size()), gw(weight.data.size());
  if (weight_out_in) {
    device_gemm(dg.data(), false, dw.data(), false, gx.data(), rows, k, n);  // dy . W
    device_gemm(dg.data(), true, dx.data(), false, gw.data(), n, k, rows);   // dy^T . x
  } else {
    device_gemm(dg.data(), false, dw.data(), true, gx.data(), rows, k, n);   // dy . W^T
    device_gemm(dx.data(), true, dg.data(), false, gw.data(), k, n, rows);   // x^T . dy
  }
  ProjectionGrads grads{zeros(x.shape), zeros(weight.shape), std::nullopt};
  if (has_bias) {
    DeviceBuffer ones(std::vector<float>(static_cast<std::size_t>(rows), 1.0f)), gb(static_cast<std::size_t>(n));
    device_gemm(dg.data(), true, ones.data(), false, gb.data(), n, 1, rows);  // dy^T . 1
    Tensor bias = zeros({n});
    gb.download(bias.data);
    grads.bias = std::move(bias);
  }
  gx.download(grads.x.data);
  gw.download(grads.weight.data);
  return grads;
}

ProjectionGrads device_linear_backward(const Tensor& x, const Tensor& weight, bool has_bias, const Tensor& dy) {
  return projection_backward(x, weight, has_bias, dy, true);
}

ProjectionGrads device_conv1d_backward(const Tensor& x, const Tensor& weight, bool has_bias, const Tensor& dy) {
  return projection_backward(x, weight, has_bias, dy, false);
}

PairGrads matmul_backward_on_gpu(const Tensor& a, const Tensor& b, const Tensor& dy) {
  const MatmulPlan plan = plan_matmul(a.shape, b.shape);
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  const int64_t batches = static_cast<int64_t>(plan.a_index.size());
  if (dy.shape != plan.out_shape || batches == 0 || m == 0 || n == 0 || k == 0) return matmul_backward(a, b, dy);
  const int64_t sa = regular_stride(plan.a_index), sb = regular_stride(plan.b_index);
  DeviceBuffer da(a.data), db(b.data), dg(dy.data);
  DeviceBuffer ga = device_zeros(a.numel()), gb = device_zeros(b.numel());
  // da[a_index[t]] (+)= dy[t] . b[b_index[t]]^T: one batched call when every
  // matrix of a is read by one product alone, else accumulate product by product.
  if ((sa == 1 || batches == 1) && sb >= 0) {
    device_gemm_batched(dg.data(), false, m * n, db.data(), true, sb * k * n, ga.data(), m * k, m, k, n, batches);
  } else {
    for (int64_t t = 0; t < batches; ++t) {
      device_gemm(dg.data() + t * m * n, false, db.data() + plan.b_index[t] * k * n, true,
                  ga.data() + plan.a_index[t] * m * k, m, k, n, 1.0f);
    }
  }
  // db[b_index[t]] (+)= a[a_index[t]]^T . dy[t], the same way.
  if ((sb == 1 || batches == 1) && sa >= 0) {
    device_gemm_batched(da.data(), true, sa * m * k, dg.data(), false, m * n, gb.data(), k * n, k, n, m, batches);
  } else {
    for (int64_t t = 0; t < batches; ++t) {
      device_gemm(da.data() + plan.a_index[t] * m * k, true, dg.data() + t * m * n, false,
                  gb.data() + plan.b_index[t] * k * n, k, n, m, 1.0f);
    }
  }
  PairGrads grads{zeros(a.shape), zeros(b.shape)};
  ga.download(grads.a.data);
  gb.download(grads.b.data);
  return grads;
}

// dx = dy * op'(x) on the GPU; scale reads dy alone.
Tensor unary_backward(UnaryOp op, const char* kind, const Tensor& x, const Tensor& dy, float divisor = 1.0f) {
  if (x.shape != dy.shape) {
    throw std::invalid_argument(std::string(kind) + " backward: input " + ir::shape_string(x.shape) +
                                " and output gradient " + ir::shape_string(dy.shape) + " differ");
  }
  Tensor dx = zeros(x.shape);
  if (x.data.empty()) return dx;
  DeviceBuffer dev_x(x.data), dev_dy(dy.data), dev_dx(x.data.size());
  SHARDSYNTH_CUDA_CHECK(launch_unary_backward(op, dev_x.data(), dev_dy.data(), dev_dx.data(), x.numel(), divisor));
  dev_dx.download(dx.data);
  return dx;
}

std::map<std::string, BackwardFn> build_gpu_backward_kernels() {
  using C = const BackwardCall&;
  return {
      {"linear", [](C c) { return projection_backward_call(c, device_linear_backward); }},
      {"conv1d", [](C c) { return projection_backward_call(c, device_conv1d_backward); }},
      {"matmul",
       [](C c) { return pair_gradients(matmul_backward_on_gpu(input(c.forward, 0), input(c.forward, 1), c.grad_output)); }},
      {"gelu", [](C c) { return input_gradient(unary_backward(UnaryOp::gelu, "gelu", input(c.forward, 0), c.grad_output)); }},
      {"silu", [](C c) { return input_gradient(unary_backward(UnaryOp::silu, "silu", input(c.forward, 0), c.grad_output)); }},
      {"gelu_tanh",
       [](C c) {
         return input_gradient(unary_backward(UnaryOp::gelu_tanh, "gelu_tanh", input(c.forward, 0), c.grad_output));
       }},
      {"relu", [](C c) { return input_gradient(unary_backward(UnaryOp::relu, "relu", input(c.forward, 0), c.grad_output)); }},
      {"scale",
       [](C c) {
         const double divisor = real_attr(c.forward, "divisor");
         if (divisor == 0) throw std::invalid_argument("scale backward: divisor is 0");
         return input_gradient(
             unary_backward(UnaryOp::scale, "scale", c.grad_output, c.grad_output, static_cast<float>(divisor)));
       }},
  };
}

}  // namespace

const std::map<std::string, BackwardFn>& gpu_backward_kernels() {
  static const std::map<std::string, BackwardFn> table = with_fp32_operands(build_gpu_backward_kernels());  // fp32 GEMMs
  return table;
}

const std::map<std::string, BackwardFn>& cuda_backward_kernels() {
  static const auto table = with_gpu_entries(reference_backward_kernels(), gpu_backward_kernels());
  return table;
}

}  // namespace shardsynth::runtime::cuda
