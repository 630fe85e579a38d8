#pragma once
// Packing shared by every Communicator: turns a collective along any tensor
// dim into an exchange of n contiguous, equal chunks (chunk j = part j along
// the dim), and back. Written once so every backend lays buffers out alike.
#include <cstdint>
#include <vector>

#include "ir/dtype.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// The n parts of `t` along `dim` (slice_part with `blocks`), part 0 first,
// each contiguous and row-major, in one flat buffer of t.numel() elements
// in t's dtype and storage (16-bit patterns stay 16-bit: what MPI sends).
// Throws std::invalid_argument when the extent does not divide.
Tensor pack_parts(const Tensor& t, int dim, int64_t parts, int64_t blocks = 1);

// Inverse direction for received data: `buffer` (any shape, in the pieces'
// dtype and storage) holds `parts` contiguous chunks of shape `piece_shape`
// (chunk j from member j); concatenates them along `dim` as concat_parts
// with `blocks`.
Tensor unpack_parts(const Tensor& buffer, const std::vector<int64_t>& piece_shape, int dim, int64_t parts,
                    int64_t blocks = 1);

// The wire form of tensors. A collective must move as many bytes per element
// as the model's element type has (ir::dtype_bytes, the cost model's own
// size), and backends move a tensor's storage as it is.
// float32 is one lane holding the value; int64 (token ids) is two lanes
// holding the 8 bytes of the integer, lanes being a trailing dim of the wire
// tensor, so slicing and concatenating along the model's dims still works on
// it; only sums (all-reduce, reduce-scatter) need one lane. float16 and
// bfloat16 are one lane too: their storage is the 16-bit patterns
// (Tensor::bits), which the communicators send as they are, 2 bytes an element.
int64_t wire_lanes(ir::DType dtype);
// `t` as it travels: itself for one lane (cast to a 16-bit dtype's storage
// when it is not in it yet), else shape t.shape + [lanes].
Tensor to_wire(const Tensor& t, ir::DType dtype);
// Inverse of to_wire: the model's elements (int64 ids as exact fp32 values; other dtypes as they travelled).
Tensor from_wire(const Tensor& wire, ir::DType dtype);

// `shape` with `dim` divided by `parts`; throws std::invalid_argument when it
// does not divide.
std::vector<int64_t> part_shape(std::vector<int64_t> shape, int dim, int64_t parts);

}  // namespace shardsynth::runtime
