#pragma once
// GPT-2: the graph of Hugging Face GPT2LMHeadModel's forward in eval mode,
// with node names and parameter names as in Hugging Face's GPT-2 checkpoints
// ("h.0.attn.c_attn.weight"), so a plan's directives apply to the real model.
#include <cstdint>
#include <string_view>

#include "ir/graph.hpp"

namespace shardsynth::ir {

// The most transformer blocks build_gpt2 takes (the largest published GPT
// models have under 100; more would only fill memory with graph nodes).
inline constexpr int64_t kGpt2MaxLayers = 1000;

struct Gpt2Config {
  int64_t n_layer = 12;          // transformer blocks h.0 .. h.{n_layer-1}
  int64_t n_head = 12;           // attention heads per block
  int64_t n_embd = 768;          // hidden size; head dim is n_embd / n_head
  int64_t seq = 1024;            // tokens per sequence (input_ids' dim 1)
  int64_t batch = 8;             // sequences per batch (input_ids' dim 0)
  int64_t vocab = 50257;         // rows of wte.weight and columns of the logits
  int64_t n_positions = 1024;    // rows of wpe.weight; the longest sequence
  DType dtype = DType::float32;  // element type of every parameter and activation
  bool loss_head = false;        // end in the cross-entropy loss against a labels input (add_lm_head), not the logits
};

// Presets "small" (12 layers, 12 heads, 768), "medium" (24, 16, 1024),
// "large" (36, 20, 1280), "xl" (48, 25, 1600), with seq 1024 and batch 8.
// Throws InputError naming an unknown preset.
Gpt2Config gpt2_preset(std::string_view name);

// input_ids, position_ids -> wte + wpe -> blocks -> ln_f -> lm_head (tied to
// wte.weight) -> output (or, with loss_head, -> loss against labels -> output). Throws InputError when a size is not positive,
// n_head does not divide n_embd, or seq exceeds n_positions.
Graph build_gpt2(const Gpt2Config& config);

}  // namespace shardsynth::ir
