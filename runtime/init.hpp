#pragma once
// Deterministic initialization of parameters and graph inputs from a seed, so
// every rank (and the single-process reference) builds identical values
// without communicating: an element depends only on (seed, name, flat index).
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// Lower and upper bound of initialized parameter values: uniform [-0.05, 0.05).
inline constexpr float kParamRange = 0.05f;
// Bound of float graph inputs: uniform [-1, 1).
inline constexpr float kInputRange = 1.0f;
// Largest integer id count an fp32 element holds exactly (2^24).
inline constexpr int64_t kMaxExactId = int64_t{1} << 24;

// A uniform draw in [0, 1) for element `index` of the tensor called `name`.
// splitmix64 over (seed, FNV-1a hash of name, index); 24 random bits.
float uniform01(uint64_t seed, const std::string& name, uint64_t index);

// A parameter called `full_name` ("h.0.attn.c_attn.weight"; a tied parameter
// uses the name it is tied to): every element uniform in [-kParamRange,
// kParamRange). No name is special-cased (LayerNorm weights are not 1).
Tensor init_param(const std::string& full_name, const std::vector<int64_t>& shape, uint64_t seed);

// A graph input for `placeholder`, keyed by its node name.
//  - float dtypes: uniform in [-kInputRange, kInputRange).
//  - int64 (token or position ids, stored as fp32 values; exact up to 2^24):
//    when dim 0 has extent 1 the tensor holds arange along its last dim
//    (0, 1, ..., n-1, repeated over leading dims): GPT-2's position_ids
//    [1, seq]. Otherwise each id is hashed into [0, vocab_limit).
// Throws std::invalid_argument when vocab_limit is not in [1, 2^24].
Tensor init_input(const ir::Node& placeholder, uint64_t seed, int64_t vocab_limit);

}  // namespace shardsynth::runtime
