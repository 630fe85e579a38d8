#pragma once
// The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON header mapping each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional
// "__metadata__" object), then the raw little-endian data the offsets index.
// Used by `shard-run --params/--input/--output`.
#include <map>
#include <string>

#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// Reads every tensor of a safetensors file, converting F32, F16, BF16, I64
// and I32 to fp32 (integers must lie within +-2^24 so they stay exact).
// Throws ir::InputError, one line naming the file and what is wrong, for an
// unreadable or malformed file: a header length beyond the file, a header
// that is not JSON, a missing or mistyped dtype/shape/data_offsets, offsets
// out of range, overlapping or not matching shape * dtype size, an unknown
// dtype, or an integer id beyond 2^24.
std::map<std::string, Tensor> read_safetensors(const std::string& path);
// The same for the file's bytes already in memory; `where` (the file name)
// starts every message. The fuzz harness calls it directly.
std::map<std::string, Tensor> parse_safetensors(const std::string& bytes, const std::string& where);

// Writes `tensors` in name order (the same bytes for the same tensors)
// through ir::write_file_atomic: fp32 storage as F32, a bfloat16/float16
// tensor as its 16-bit patterns (BF16, F16). Throws std::invalid_argument naming
// a tensor whose data size differs from its shape's product, ir::InputError
// naming the path when it cannot be written.
void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors);

}  // namespace shardsynth::runtime
