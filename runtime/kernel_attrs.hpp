#pragma once
// What the kernel tables (forward, runtime/reference.cpp; backward,
// runtime/backward.cpp; and the CUDA tables) read off a KernelCall besides
// its tensors: the node's attributes and where this rank's shard sits.
// Each throws std::invalid_argument naming the node when it lacks one.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/reference.hpp"

namespace shardsynth::runtime {

// Integer-list attribute `name` with at least `min_size` values.
const std::vector<int64_t>& attr_list(const KernelCall& call, const std::string& name, std::size_t min_size = 1);
// Value `i` of integer attribute `name`.
int64_t attr(const KernelCall& call, const std::string& name, std::size_t i = 0);
// Real-valued attribute `name` (scale's "divisor").
double real_attr(const KernelCall& call, const std::string& name);
// The global (query, key) offsets of a score shard [..., q, k]: the last two
// of in_offsets, (0, 0) when the call has fewer (a whole tensor).
std::pair<int64_t, int64_t> causal_offsets(const KernelCall& call);
// The global index of the local first row of dim -2 of input 0 (rotary's
// sequence position): in_offsets' second to last, 0 for a whole tensor.
int64_t seq_offset(const KernelCall& call);
// The first vocabulary row of the local embedding table: weight_offsets[0], 0 when whole.
int64_t embedding_offset(const KernelCall& call);
// The output shape view produces: out_shape, or the node's global shape when empty.
const std::vector<int64_t>& view_shape(const KernelCall& call);
// The global index of the local first entry of the last dim of input 0
// (cross_entropy's vocabulary offset): in_offsets' last, 0 for a whole tensor.
int64_t last_dim_offset(const KernelCall& call);
// The rows' global softmax statistics [rows, 2] of input 0 (softmax_row_stats),
// exchanged among the vocabulary shards when the call has an exchange.
Tensor global_row_stats(const KernelCall& call);

}  // namespace shardsynth::runtime
