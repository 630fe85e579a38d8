#pragma once
// CPU kernels of every op kind, on whole tensors or on one rank's local
// shards. Each takes and returns runtime::Tensor (row-major fp32); GEMMs go
// through OpenBLAS. Shape mismatches throw std::invalid_argument.
#include <cstdint>
#include <vector>

#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// --- dense (kernels_dense.cpp) ---

// nn.Linear: x[..., k] . weight[n, k]^T + bias[n] -> [..., n]. bias may be null.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor* bias);
// Hugging Face Conv1D: x[..., k] . weight[k, n] + bias[n] -> [..., n]. bias may be null.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor* bias);
// torch.matmul for rank >= 2 operands: [..., m, k] @ [..., k, n] -> [..., m, n],
// with numpy broadcasting of the leading (batch) dims.
Tensor matmul(const Tensor& a, const Tensor& b);

// How a batched matmul [..., m, k] @ [..., k, n] walks its operands, with the
// batch dims broadcast right-aligned; shared by every backend.
struct MatmulPlan {
  int64_t m = 0;                   // rows of each product
  int64_t k = 0;                   // contracted extent
  int64_t n = 0;                   // columns of each product
  std::vector<int64_t> out_shape;  // broadcast batch dims, then m, n
  std::vector<int64_t> a_index;    // per output matrix: which matrix of a it reads
  std::vector<int64_t> b_index;    // per output matrix: which matrix of b it reads
};
// Throws std::invalid_argument when the shapes do not fit or do not broadcast.
MatmulPlan plan_matmul(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// nn.Embedding over a slice of the vocabulary: `weight` holds rows for ids
// offset .. offset + rows - 1 (the whole table when offset is 0). ids (exact
// integers stored as fp32) outside that range give zero rows, so the sum over
// a vocab-sharded table's shards is the full lookup. ids[...] -> [..., d].
Tensor embedding(const Tensor& ids, const Tensor& weight, int64_t offset = 0);

// --- elementwise and normalization (kernels_pointwise.cpp) ---

// LayerNorm over the last dim with affine weight[d] and bias[d].
Tensor layernorm(const Tensor& x, const Tensor& weight, const Tensor& bias, float eps = 1e-5f);
// Softmax over the last dim (max-subtracted, numerically stable).
Tensor softmax(const Tensor& x);
// Exact GELU: x/2 (1 + erf(x / sqrt 2)).
Tensor gelu(const Tensor& x);
// Hugging Face NewGELU: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Tensor gelu_tanh(const Tensor& x);
// max(x, 0).
Tensor relu(const Tensor& x);
// Dropout in eval mode: the identity.
Tensor dropout(const Tensor& x);
// a + b with numpy broadcasting (trailing dims aligned; extent 1 broadcasts).
Tensor add(const Tensor& a, const Tensor& b);
// x / divisor.
Tensor scale(const Tensor& x, double divisor);
// GPT-2's causal mask on scores [..., q, k]: an entry whose global key index
// (k_offset + local col) exceeds its global query index (q_offset + local row)
// becomes the lowest finite float, as Hugging Face's torch.finfo(dtype).min.
Tensor causal_mask(const Tensor& x, int64_t q_offset = 0, int64_t k_offset = 0);
// Sets to `value`, in place, every entry of scores [..., q, k] that the causal
// mask hides (global key index above global query index, offsets as
// causal_mask); causal_mask and its backward (kernels_backward.hpp) share it.
void fill_above_causal_diagonal(Tensor& scores, int64_t q_offset, int64_t k_offset, float value);

// Llama's RMSNorm over the last dim: x / sqrt(mean(x^2) + eps) * weight[d].
Tensor rms_norm(const Tensor& x, const Tensor& weight, float eps = 1e-5f);
// x * sigmoid(x).
Tensor silu(const Tensor& x);
// a * b elementwise, same shapes.
Tensor mul(const Tensor& a, const Tensor& b);
// Rotary position embedding (Hugging Face's rotate_half form) on x[..., s, d]
// with d even: element i < d/2 pairs with i + d/2, and at global position
// p = s_offset + local row the pair turns by the angle p * theta^(-2i/d)
// (by its negative with `inverse`: the rotation's transpose, its backward).
Tensor rotary(const Tensor& x, double theta, int64_t s_offset = 0, bool inverse = false);

// --- layout (kernels_layout.cpp) ---

// Reshape to `shape` (same numel; one extent may be -1 and is inferred).
Tensor view(const Tensor& x, const std::vector<int64_t>& shape);
// Output dim i is input dim dims[i]; negative dims count from the end.
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
// Swaps dims d0 and d1; negative dims count from the end.
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
// Grouped-query attention's KV repetition: x[..., kv, s, d] ->
// [..., kv * (out_heads / kv), s, d], each head repeated in place (kv major).
Tensor repeat_kv(const Tensor& x, int64_t out_heads);
// Part `index` of `sections` equal parts along `dim` (negative counts from the end).
Tensor split(const Tensor& x, int64_t dim, int64_t sections, int64_t index);

// --- the loss head (kernels_loss.cpp) ---

// Per row of logits [..., v] (a whole row, or this shard's slice of the
// vocabulary): the max and the sum of exp(z - max), as [rows, 2].
Tensor softmax_row_stats(const Tensor& logits);
// The rows' global (max, sum) [rows, 2] from every vocabulary shard's pairs
// side by side, [rows, 2 n] (costs/row_exchange.hpp's gathered layout).
Tensor combine_row_stats(const Tensor& gathered);
// torch.nn.functional.cross_entropy summed over the rows of logits
// [..., v_local] against integer labels [...] (exact integers stored as
// fp32) and divided by `divisor`, as a scalar. The logits' first column is
// vocabulary entry `vocab_offset`, and `stats` holds each row's global
// (max, sum) over the whole vocabulary: the shard at offset 0 adds each row's
// log-sum-exp and the shard holding a row's label subtracts its logit, so
// the sum over the vocabulary shards (and over shards of the rows) is the loss.
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const Tensor& stats, int64_t vocab_offset,
                     double divisor);

}  // namespace shardsynth::runtime
