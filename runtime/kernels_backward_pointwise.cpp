#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "ir/tensor.hpp"
#include "runtime/kernels.hpp"
#include "runtime/kernels_backward.hpp"

namespace shardsynth::runtime {
namespace {

// dx[i] = dy[i] * slope(x[i]), computed in double; x and dy must agree in shape.
template <typename Slope>
Tensor chain(const char* kind, const Tensor& x, const Tensor& dy, Slope slope) {
  if (x.shape != dy.shape) {
    throw std::invalid_argument(std::string(kind) + " backward: input " + ir::shape_string(x.shape) +
                                " and output gradient " + ir::shape_string(dy.shape) + " differ");
  }
  Tensor dx = zeros(x.shape);
  for (std::size_t i = 0; i < dx.data.size(); ++i) {
    dx.data[i] = static_cast<float>(static_cast<double>(dy.data[i]) * slope(static_cast<double>(x.data[i])));
  }
  return dx;
}

// The extent of the last dim of a rank >= 1 tensor whose shape `dy` shares.
int64_t row_width(const char* kind, const Tensor& t, const Tensor& dy) {
  if (t.rank() < 1 || t.shape != dy.shape) {
    throw std::invalid_argument(std::string(kind) + " backward: needs rank >= 1 and an output gradient of shape " +
                                ir::shape_string(t.shape) + ", got " + ir::shape_string(dy.shape));
  }
  return t.shape.back();
}

}  // namespace

LayerNormGrads layernorm_backward(const Tensor& x, const Tensor& weight, const Tensor& dy, float eps) {
  const int64_t d = row_width("layernorm", x, dy);
  if (weight.numel() != d) {
    throw std::invalid_argument("layernorm backward: weight size does not match last dim " + std::to_string(d));
  }
  const int64_t rows = d == 0 ? 0 : x.numel() / d;
  LayerNormGrads grads{zeros(x.shape), zeros({d}), zeros({d})};
  std::vector<double> dweight(d, 0.0), dbias(d, 0.0), xhat(d), scaled(d);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data.data() + r * d;
    const float* g = dy.data.data() + r * d;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += in[j];
    mean /= static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j) var += (in[j] - mean) * (in[j] - mean);
    var /= static_cast<double>(d);  // biased, as the forward
    const double inv = 1.0 / std::sqrt(var + eps);
    double mean_scaled = 0, mean_scaled_xhat = 0;
    for (int64_t j = 0; j < d; ++j) {
      xhat[j] = (in[j] - mean) * inv;
      scaled[j] = static_cast<double>(g[j]) * weight.data[j];  // d loss / d xhat
      dweight[j] += g[j] * xhat[j];
      dbias[j] += g[j];
      mean_scaled += scaled[j];
      mean_scaled_xhat += scaled[j] * xhat[j];
    }
    mean_scaled /= static_cast<double>(d);
    mean_scaled_xhat /= static_cast<double>(d);
    float* out = grads.x.data.data() + r * d;
    for (int64_t j = 0; j < d; ++j) {
      out[j] = static_cast<float>(inv * (scaled[j] - mean_scaled - xhat[j] * mean_scaled_xhat));
    }
  }
  for (int64_t j = 0; j < d; ++j) {
    grads.weight.data[j] = static_cast<float>(dweight[j]);
    grads.bias.data[j] = static_cast<float>(dbias[j]);
  }
  return grads;
}

Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  const int64_t d = row_width("softmax", y, dy);
  const int64_t rows = d == 0 ? 0 : y.numel() / d;
  Tensor dx = zeros(y.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = y.data.data() + r * d;
    const float* g = dy.data.data() + r * d;
    double dot = 0;
    for (int64_t j = 0; j < d; ++j) dot += static_cast<double>(g[j]) * p[j];
    for (int64_t j = 0; j < d; ++j) dx.data[r * d + j] = static_cast<float>(p[j] * (g[j] - dot));
  }
  return dx;
}

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  return chain("gelu", x, dy, [](double v) {
    const double cdf = 0.5 * (1.0 + std::erf(v / std::numbers::sqrt2));
    const double pdf = std::exp(-0.5 * v * v) * std::numbers::inv_sqrtpi / std::numbers::sqrt2;
    return cdf + v * pdf;
  });
}

Tensor gelu_tanh_backward(const Tensor& x, const Tensor& dy) {
  return chain("gelu_tanh", x, dy, [](double v) {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    const double t = std::tanh(c * (v + 0.044715 * v * v * v));
    return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * v * v);
  });
}

Tensor relu_backward(const Tensor& x, const Tensor& dy) {
  return chain("relu", x, dy, [](double v) { return v > 0.0 ? 1.0 : 0.0; });
}

Tensor sum_to_shape(const Tensor& dy, const std::vector<int64_t>& shape) {
  const int rank = dy.rank();
  const int lead = rank - static_cast<int>(shape.size());  // dims of dy that `shape` lacks
  if (lead < 0) {
    throw std::invalid_argument("sum_to_shape: " + ir::shape_string(shape) + " has more dims than " +
                                ir::shape_string(dy.shape));
  }
  // Per dim of dy: the stride of the matching dim of `shape`, 0 where it broadcasts.
  std::vector<int64_t> stride(rank, 0);
  int64_t step = 1;
  for (int i = rank - 1; i >= lead; --i) {
    const int64_t extent = shape[i - lead];
    if (extent != dy.shape[i] && extent != 1) {
      throw std::invalid_argument("sum_to_shape: " + ir::shape_string(shape) + " does not broadcast to " +
                                  ir::shape_string(dy.shape));
    }
    if (extent != 1) stride[i] = step;
    step *= extent;
  }
  std::vector<double> sum(static_cast<std::size_t>(step), 0.0);
  for (int64_t t = 0; t < dy.numel(); ++t) {
    int64_t rest = t, target = 0;
    for (int i = rank - 1; i >= 0; --i) {
      target += (rest % dy.shape[i]) * stride[i];
      rest /= dy.shape[i];
    }
    sum[target] += dy.data[t];
  }
  Tensor out = zeros(shape);
  for (std::size_t i = 0; i < sum.size(); ++i) out.data[i] = static_cast<float>(sum[i]);
  return out;
}

PairGrads add_backward(const std::vector<int64_t>& a_shape, const std::vector<int64_t>& b_shape, const Tensor& dy) {
  return {sum_to_shape(dy, a_shape), sum_to_shape(dy, b_shape)};
}

Tensor scale_backward(const Tensor& dy, double divisor) {
  if (divisor == 0) throw std::invalid_argument("scale backward: divisor is 0");
  return chain("scale", dy, dy, [divisor](double) { return 1.0 / divisor; });
}

Tensor causal_mask_backward(const Tensor& dy, int64_t q_offset, int64_t k_offset) {
  Tensor dx = dy;
  fill_above_causal_diagonal(dx, q_offset, k_offset, 0.0f);
  return dx;
}

RmsNormGrads rms_norm_backward(const Tensor& x, const Tensor& weight, const Tensor& dy, float eps) {
  if (x.rank() < 1 || dy.shape != x.shape || weight.numel() != x.shape.back()) {
    throw std::invalid_argument("rms_norm_backward: x, weight and dy do not fit");
  }
  const int64_t d = x.shape.back(), rows = d == 0 ? 0 : x.numel() / d;
  RmsNormGrads g{zeros(x.shape), zeros(weight.shape)};
  std::vector<double> dweight(d, 0.0);
  for (int64_t row = 0; row < rows; ++row) {
    const float* xr = x.data.data() + row * d;
    const float* dyr = dy.data.data() + row * d;
    double squares = 0, gx = 0;
    for (int64_t j = 0; j < d; ++j) {
      squares += static_cast<double>(xr[j]) * xr[j];
      gx += static_cast<double>(dyr[j]) * weight.data[j] * xr[j];
    }
    const double r = 1.0 / std::sqrt(squares / static_cast<double>(d) + eps);
    const double correction = r * r * r * gx / static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j) {
      g.x.data[row * d + j] = static_cast<float>(r * dyr[j] * weight.data[j] - xr[j] * correction);
      dweight[j] += static_cast<double>(dyr[j]) * xr[j] * r;
    }
  }
  for (int64_t j = 0; j < d; ++j) g.weight.data[j] = static_cast<float>(dweight[j]);
  return g;
}

Tensor silu_backward(const Tensor& x, const Tensor& dy) {
  if (dy.shape != x.shape) throw std::invalid_argument("silu_backward: dy does not match x");
  Tensor dx = dy;
  for (std::size_t i = 0; i < dx.data.size(); ++i) {
    const float v = x.data[i], s = 1.0f / (1.0f + std::exp(-v));
    dx.data[i] *= s * (1.0f + v * (1.0f - s));
  }
  return dx;
}

PairGrads mul_backward(const Tensor& a, const Tensor& b, const Tensor& dy) {
  return {mul(dy, b), mul(dy, a)};
}

}  // namespace shardsynth::runtime
