#pragma once
// Built-in model builders.
#include <cstdint>

#include "ir/graph.hpp"

namespace shardsynth::ir {

struct MlpConfig {
  int64_t batch = 8;              // x's dim 0
  int64_t seq = 1024;             // x's dim 1
  int64_t hidden = 1024;          // x's dim 2, fc1's in_features and fc2's out_features
  int64_t ffn = 4096;             // fc1's out_features, fc2's in_features
  DType dtype = DType::float32;   // element type of every tensor
};

// x[batch, seq, hidden] -> fc1 Linear(hidden, ffn) -> gelu -> fc2 Linear(ffn, hidden) -> output.
// Throws InputError when a size is not positive.
Graph build_mlp(const MlpConfig& config);

// Helpers shared by builders.
Node placeholder(const std::string& name, TensorType type);
Node linear(const std::string& name, int64_t in_features, int64_t out_features, std::vector<int64_t> out_shape,
            DType dtype);
// Ends a language model at node `logits` [..., vocab]: an output node of the
// logits, or with `loss_head` the training loss inside the graph: a `labels`
// placeholder (int64, the logits' leading shape: the next token of each
// position, as a data loader hands them), a `loss` cross_entropy node (fp32,
// the mean over the positions) and an output node of the scalar loss.
void add_lm_head(Graph& graph, const std::string& logits, bool loss_head);

}  // namespace shardsynth::ir
