#pragma once
// Vector-Jacobian products of the CPU kernels of runtime/kernels.hpp, on
// whole tensors or one rank's local shards: given the forward's operands (or
// its output, where that is what the gradient needs) and dy = d loss / d
// output, each returns d loss / d operand for its local computation. GEMMs go
// through OpenBLAS; sums accumulate in double where a row is reduced.
// Shape mismatches throw std::invalid_argument.
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// --- dense (kernels_backward_dense.cpp) ---

// Gradients of linear / conv1d: x[..., k], a 2-D weight and an optional bias[n].
struct ProjectionGrads {
  Tensor x;                   // d loss / d x, the shape of x
  Tensor weight;              // d loss / d weight, the shape of weight
  std::optional<Tensor> bias; // d loss / d bias [n]; set only when the forward had a bias
};
// nn.Linear (weight [n, k]): dx = dy . W, dW = dy^T . x, db = dy summed over rows.
ProjectionGrads linear_backward(const Tensor& x, const Tensor& weight, bool has_bias, const Tensor& dy);
// Hugging Face Conv1D (weight [k, n]): dx = dy . W^T, dW = x^T . dy, db as linear.
ProjectionGrads conv1d_backward(const Tensor& x, const Tensor& weight, bool has_bias, const Tensor& dy);

// Gradients of a two-operand op: one tensor per operand, each of its shape.
struct PairGrads {
  Tensor a;  // d loss / d first operand
  Tensor b;  // d loss / d second operand
};
// torch.matmul with batch broadcasting (plan_matmul): da[..] = dy . b^T and
// db[..] = a^T . dy, each summed over the batch dims its operand was broadcast along.
PairGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dy);
// The gradient of the local embedding table weight [rows, d] holding ids
// offset .. offset + rows - 1: row id - offset accumulates dy[i] for every
// id i in range; ids outside give nothing (and ids get no gradient).
Tensor embedding_backward(const Tensor& ids, const std::vector<int64_t>& weight_shape, int64_t offset,
                          const Tensor& dy);

// d loss / d logits of cross_entropy (kernels.hpp, same arguments) for the
// loss's gradient dy (a scalar): dy (softmax(z) - onehot(label)) / divisor
// on this shard's columns, the softmax from the rows' global statistics.
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& labels, const Tensor& stats, int64_t vocab_offset,
                              double divisor, const Tensor& dy);

// --- elementwise and normalization (kernels_backward_pointwise.cpp) ---

// Gradients of layernorm over the last dim with affine weight[d] and bias[d].
struct LayerNormGrads {
  Tensor x;       // d loss / d x
  Tensor weight;  // d loss / d weight [d], summed over rows
  Tensor bias;    // d loss / d bias [d], summed over rows
};
LayerNormGrads layernorm_backward(const Tensor& x, const Tensor& weight, const Tensor& dy, float eps = 1e-5f);
// Softmax over the last dim from its output y: dx = y * (dy - sum(dy * y)).
Tensor softmax_backward(const Tensor& y, const Tensor& dy);
// Exact GELU: dx = dy * (Phi(x) + x phi(x)).
Tensor gelu_backward(const Tensor& x, const Tensor& dy);
// Hugging Face NewGELU (the tanh approximation), differentiated exactly.
Tensor gelu_tanh_backward(const Tensor& x, const Tensor& dy);
// max(x, 0): dy where x > 0, else 0 (torch's choice at 0).
Tensor relu_backward(const Tensor& x, const Tensor& dy);
// `dy` summed down to `shape` over the dims `shape` was broadcast along (numpy
// rules: right-aligned, extent 1 or missing broadcasts).
Tensor sum_to_shape(const Tensor& dy, const std::vector<int64_t>& shape);
// a + b with broadcasting: dy summed to each operand's shape.
PairGrads add_backward(const std::vector<int64_t>& a_shape, const std::vector<int64_t>& b_shape, const Tensor& dy);
// x / divisor: dy / divisor.
Tensor scale_backward(const Tensor& dy, double divisor);
// causal_mask: dy, zero where the forward wrote the lowest float (global key
// index k_offset + col above global query index q_offset + row).
Tensor causal_mask_backward(const Tensor& dy, int64_t q_offset = 0, int64_t k_offset = 0);

// Gradients of rms_norm over the last dim with weight[d]: with r = 1/rms(x)
// and g = dy * weight, dx = r g - x r^3 mean(g x); dweight = sum over rows of dy x r.
struct RmsNormGrads {
  Tensor x;       // d loss / d x
  Tensor weight;  // d loss / d weight [d], summed over rows
};
RmsNormGrads rms_norm_backward(const Tensor& x, const Tensor& weight, const Tensor& dy, float eps = 1e-5f);
// silu: dx = dy * s (1 + x (1 - s)), s = sigmoid(x).
Tensor silu_backward(const Tensor& x, const Tensor& dy);
// a * b: da = dy * b, db = dy * a.
PairGrads mul_backward(const Tensor& a, const Tensor& b, const Tensor& dy);

// --- layout (kernels_backward_layout.cpp) ---

// view: dy reshaped back to the input's shape.
Tensor view_backward(const Tensor& dy, const std::vector<int64_t>& input_shape);
// permute: dy permuted by the inverse permutation.
Tensor permute_backward(const Tensor& dy, const std::vector<int64_t>& dims);
// transpose: the same swap again.
Tensor transpose_backward(const Tensor& dy, int64_t d0, int64_t d1);
// repeat_kv: dy [..., kv * rep, s, d] summed over each KV head's repeats -> [..., kv, s, d].
Tensor repeat_kv_backward(const Tensor& dy, int64_t kv_heads);
// split: zeros of the input's shape with dy placed back as part `index`.
Tensor split_backward(const Tensor& dy, const std::vector<int64_t>& input_shape, int64_t dim, int64_t sections,
                      int64_t index);

}  // namespace shardsynth::runtime
