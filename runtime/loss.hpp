#pragma once
// The loss a training run minimizes, on the graph output gathered whole.
//
//  - next_token: a language model's next-token cross-entropy, as Hugging
//    Face's GPT2LMHeadModel computes it with `labels` = the input ids: the
//    logits at position t score the id at position t + 1, averaged over every
//    (batch, position < seq - 1) pair.
//  - mse: the mean squared error against a seeded target of the output's
//    shape (uniform in [-1, 1), keyed "loss.target"), as torch.nn.MSELoss.
//  - in_graph: the graph computes its own loss (a cross_entropy head,
//    planned, priced and sharded like any op: ir::add_lm_head); the output
//    is the loss, and its gradient is 1.
//
// Which one a graph gets is read from its structure, not its name: in_graph
// when the output is a scalar; next_token when an int64 placeholder of the
// output's leading shape feeds an embedding whose row count is the output's
// last extent (token ids scored against the vocabulary), else mse.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/graph.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

enum class LossKind { next_token, mse, in_graph };

struct LossChoice {
  LossKind kind = LossKind::mse;  // the loss
  std::string labels;             // next_token: the placeholder holding the token ids
};

// The loss for `graph` (see above). Throws ir::InputError when the graph has
// no output node, or a next_token output has fewer than 2 positions.
LossChoice choose_loss(const ir::Graph& graph);
// "next_token" / "mse" / "in_graph".
std::string loss_name(LossKind kind);

struct LossValue {
  double value = 0;  // the loss
  Tensor grad;       // d loss / d output, the output's shape
};

// The loss of `output` (whole). `labels` (whole ids) for next_token; `seed`
// draws the mse target.
LossValue compute_loss(const LossChoice& choice, const Tensor& output, const Tensor* labels, uint64_t seed);

}  // namespace shardsynth::runtime
