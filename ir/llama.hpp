#pragma once
// Llama: the graph of Hugging Face LlamaForCausalLM's forward (eager
// attention), with node names that are its module paths and parameter names
// and layouts as in its checkpoints ("model.layers.0.self_attn.q_proj.weight",
// nn.Linear [out, in], no biases), so a plan's directives apply to the real
// model and `shard-run --params` reads a Hugging Face safetensors file as is.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.hpp"

namespace shardsynth::ir {

// The most decoder layers build_llama takes (the largest published Llama has
// 126; more would only fill memory with graph nodes).
inline constexpr int64_t kLlamaMaxLayers = 1000;

struct LlamaConfig {
  int64_t n_layer = 32;                 // decoder layers model.layers.0 .. {n_layer-1}
  int64_t hidden = 4096;                // hidden size (embedding width)
  int64_t n_head = 32;                  // query heads; head dim is hidden / n_head
  int64_t n_kv_head = 8;                // key/value heads (grouped-query attention); divides n_head
  int64_t ffn = 14336;                  // intermediate size of gate_proj and up_proj
  int64_t vocab = 128256;               // rows of model.embed_tokens.weight and columns of the logits
  int64_t seq = 1024;                   // tokens per sequence (input_ids' dim 1)
  int64_t batch = 8;                    // sequences per batch (input_ids' dim 0)
  int64_t max_positions = 8192;         // max_position_embeddings: the longest sequence
  bool tied = false;                    // tie_word_embeddings: lm_head.weight is model.embed_tokens.weight
  double rope_theta = 500000;           // rotary base (10000 for Llama 2); no rope_scaling
  double rms_norm_eps = 1e-5;           // RMSNorm's epsilon
  DType dtype = DType::float32;         // element type of every parameter and activation
  bool loss_head = false;               // end in the cross-entropy loss against a labels input (add_lm_head), not the logits
};

// Presets from the published configs: llama-3.2-1b, llama-3.2-3b (tied),
// llama-2-7b, llama-3-8b, llama-3-70b (untied), with seq 1024 and batch 8.
// Throws InputError naming an unknown preset.
LlamaConfig llama_preset(std::string_view name);
// The preset names, in the order of the list above.
std::vector<std::string> llama_preset_names();

// input_ids -> model.embed_tokens -> decoder layers (input_layernorm,
// self_attn with rotary q/k and KV heads repeated to the query heads,
// post_attention_layernorm, SwiGLU mlp) -> model.norm -> lm_head -> output.
// Throws InputError (one line naming the value) when a size is not positive,
// n_layer exceeds kLlamaMaxLayers, n_kv_head does not divide n_head, n_head
// does not divide hidden, the head dim is odd, or seq exceeds max_positions.
Graph build_llama(const LlamaConfig& config);

}  // namespace shardsynth::ir
