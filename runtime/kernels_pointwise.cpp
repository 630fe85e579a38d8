#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "runtime/kernels.hpp"

namespace shardsynth::runtime {
namespace {

// Applies f to every element.
template <typename F>
Tensor map(const Tensor& x, F f) {
  Tensor out = x;
  for (float& v : out.data) v = f(v);
  return out;
}

// Extent of the last dim and the number of rows before it; throws on rank 0.
std::pair<int64_t, int64_t> rows_and_width(const char* kind, const Tensor& x) {
  if (x.rank() < 1) throw std::invalid_argument(std::string(kind) + ": needs a tensor of rank >= 1");
  const int64_t width = x.shape.back();
  return {width == 0 ? 0 : x.numel() / width, width};
}

}  // namespace

Tensor layernorm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps) {
  const auto [rows, d] = rows_and_width("layernorm", x);
  if (weight.numel() != d || bias.numel() != d) {
    throw std::invalid_argument("layernorm: weight/bias size does not match last dim " + std::to_string(d));
  }
  Tensor out = x;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = out.data.data() + r * d;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += row[j];
    mean /= static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(d);  // biased variance, as torch
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < d; ++j) {
      row[j] = static_cast<float>((row[j] - mean) * inv) * weight.data[j] + bias.data[j];
    }
  }
  return out;
}

Tensor softmax(const Tensor& x) {
  const auto [rows, d] = rows_and_width("softmax", x);
  Tensor out = x;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = out.data.data() + r * d;
    const float top = *std::max_element(row, row + d);
    double sum = 0;
    for (int64_t j = 0; j < d; ++j) {
      row[j] = std::exp(row[j] - top);
      sum += row[j];
    }
    for (int64_t j = 0; j < d; ++j) row[j] = static_cast<float>(row[j] / sum);
  }
  return out;
}

Tensor gelu(const Tensor& x) {
  return map(x, [](float v) { return 0.5f * v * (1.0f + std::erf(v / std::numbers::sqrt2_v<float>)); });
}

Tensor gelu_tanh(const Tensor& x) {
  const float c = std::sqrt(2.0f / std::numbers::pi_v<float>);
  return map(x, [c](float v) { return 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v))); });
}

Tensor relu(const Tensor& x) {
  return map(x, [](float v) { return std::max(v, 0.0f); });
}

Tensor dropout(const Tensor& x) { return x; }

Tensor add(const Tensor& a, const Tensor& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> shape(rank), a_ext(rank, 1), b_ext(rank, 1);
  for (int i = 0; i < rank; ++i) {
    const int ai = i - (rank - a.rank()), bi = i - (rank - b.rank());
    if (ai >= 0) a_ext[i] = a.shape[ai];
    if (bi >= 0) b_ext[i] = b.shape[bi];
    if (a_ext[i] != b_ext[i] && a_ext[i] != 1 && b_ext[i] != 1) {
      throw std::invalid_argument("add: shapes do not broadcast at dim " + std::to_string(i));
    }
    shape[i] = std::max(a_ext[i], b_ext[i]);
  }
  Tensor out = zeros(shape);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t t = 0; t < out.numel(); ++t) {
    int64_t a_off = 0, b_off = 0;
    for (int i = 0; i < rank; ++i) {
      a_off = a_off * a_ext[i] + (a_ext[i] == 1 ? 0 : idx[i]);
      b_off = b_off * b_ext[i] + (b_ext[i] == 1 ? 0 : idx[i]);
    }
    out.data[t] = a.data[a_off] + b.data[b_off];
    for (int i = rank - 1; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

Tensor scale(const Tensor& x, double divisor) {
  if (divisor == 0) throw std::invalid_argument("scale: divisor is 0");
  const float d = static_cast<float>(divisor);
  return map(x, [d](float v) { return v / d; });
}

void fill_above_causal_diagonal(Tensor& scores, int64_t q_offset, int64_t k_offset, float value) {
  if (scores.rank() < 2) throw std::invalid_argument("causal_mask: needs scores of rank >= 2");
  const int64_t q = scores.shape[scores.rank() - 2], k = scores.shape.back();
  const int64_t mats = q * k == 0 ? 0 : scores.numel() / (q * k);
  for (int64_t m = 0; m < mats; ++m) {
    for (int64_t i = 0; i < q; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        if (k_offset + j > q_offset + i) scores.data[(m * q + i) * k + j] = value;
      }
    }
  }
}

Tensor causal_mask(const Tensor& x, int64_t q_offset, int64_t k_offset) {
  Tensor out = x;
  fill_above_causal_diagonal(out, q_offset, k_offset, std::numeric_limits<float>::lowest());
  return out;
}

Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps) {
  const auto [rows, d] = rows_and_width("rms_norm", x);
  if (weight.numel() != d) throw std::invalid_argument("rms_norm: weight size does not match last dim " + std::to_string(d));
  Tensor out = x;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = out.data.data() + r * d;
    double squares = 0;
    for (int64_t j = 0; j < d; ++j) squares += static_cast<double>(row[j]) * row[j];
    const float inv = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(d) + eps));
    for (int64_t j = 0; j < d; ++j) row[j] = weight.data[j] * (row[j] * inv);
  }
  return out;
}

Tensor silu(const Tensor& x) {
  return map(x, [](float v) { return v / (1.0f + std::exp(-v)); });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape) throw std::invalid_argument("mul: operand shapes differ");
  Tensor out = a;
  for (std::size_t i = 0; i < out.data.size(); ++i) out.data[i] *= b.data[i];
  return out;
}

Tensor rotary(const Tensor& x, double theta, int64_t s_offset, bool inverse) {
  if (x.rank() < 2) throw std::invalid_argument("rotary: needs a tensor of rank >= 2");
  const int64_t s = x.shape[x.rank() - 2], d = x.shape.back();
  if (d % 2 != 0) throw std::invalid_argument("rotary: head dim " + std::to_string(d) + " is odd");
  const int64_t half = d / 2;
  // cos and sin per local row and pair, as Hugging Face computes them (fp32 angles).
  std::vector<float> cos_table(s * half), sin_table(s * half);
  for (int64_t i = 0; i < half; ++i) {
    const float inv_freq = static_cast<float>(1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(d)));
    for (int64_t r = 0; r < s; ++r) {
      const float angle = static_cast<float>(s_offset + r) * inv_freq;
      cos_table[r * half + i] = std::cos(angle);
      sin_table[r * half + i] = inverse ? -std::sin(angle) : std::sin(angle);
    }
  }
  Tensor out = x;
  const int64_t rows = s * d == 0 ? 0 : x.numel() / d;
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t r = row % s;
    const float* in = x.data.data() + row * d;
    float* y = out.data.data() + row * d;
    for (int64_t i = 0; i < half; ++i) {
      const float c = cos_table[r * half + i], sn = sin_table[r * half + i];
      y[i] = in[i] * c - in[i + half] * sn;
      y[i + half] = in[i + half] * c + in[i] * sn;
    }
  }
  return out;
}

}  // namespace shardsynth::runtime
