#pragma once
// Packing shared by every Communicator: turns a collective along any tensor
// dim into an exchange of n contiguous, equal chunks (chunk j = part j along
// the dim), and back. Written once so every backend lays buffers out alike.
#include <cstdint>
#include <vector>

#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// The n parts of `t` along `dim` (slice_part with `blocks`), part 0 first,
// each contiguous and row-major, in one buffer of t.numel() elements.
// Throws std::invalid_argument when the extent does not divide.
std::vector<float> pack_parts(const Tensor& t, int dim, int64_t parts, int64_t blocks = 1);

// Inverse direction for received data: `buffer` holds `parts` contiguous
// chunks of shape `piece_shape` (chunk j from member j); concatenates them
// along `dim` as concat_parts with `blocks`.
Tensor unpack_parts(const std::vector<float>& buffer, const std::vector<int64_t>& piece_shape, int dim, int64_t parts,
                    int64_t blocks = 1);

// `shape` with `dim` divided by `parts`; throws std::invalid_argument when it
// does not divide.
std::vector<int64_t> part_shape(std::vector<int64_t> shape, int dim, int64_t parts);

}  // namespace shardsynth::runtime
