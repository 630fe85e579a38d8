#pragma once
// How one tensor is laid out on the mesh.
//
// A Spec describes the trailing dims() tensor dims (all of them in the general
// model, the last two under the `slapo` preset); leading dims it does not
// describe are replicated. For each described dim it lists the mesh axes that
// shard it, major first; it also lists the mesh axes on which the tensor is a
// pending partial sum.
//
// A sharded dim may be *blocked*: viewed as `blocks` equal contiguous parts,
// each part sharded the same way, so a device holds its slice of every part
// (a strided shard). This is how a fused [q | k | v] feature dim is sharded by
// heads: blocks = 3.
//
// Text form, one token per described dim, then an optional partial suffix:
//   1-D mesh:  R, S           e.g. RR, RS, SR, RR+P
//   N-D mesh:  R, S0, S1, S01 e.g. S0RS1, RS01, RR+P0, S0R+P1
//   blocked:   S(3), S1(3)    e.g. RRS(3): last dim sharded within each of 3 blocks
//   scalar:    no dim tokens  "" (replicated), "+P01" (a pending partial sum)
// (S01 = sharded over axis 0 then axis 1, axis 0 major.)
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/mesh.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::ir {

struct Spec {
  std::vector<std::vector<int>> dims;  // per described dim: mesh axes sharding it, major first; empty = replicated
  std::vector<int> partial;            // mesh axes with a pending partial sum, ascending
  std::vector<int64_t> blocks;         // per described dim: interleaved blocks it is sharded within; empty = all 1

  int64_t blocks_of(int dim) const { return blocks.empty() ? 1 : blocks[dim]; }
  // Sets dim's block count, keeping `blocks` empty while every count is 1.
  void set_blocks(int dim, int64_t count);

  int rank() const { return static_cast<int>(dims.size()); }
  bool is_replicated() const;  // no dim sharded and nothing partial
  bool operator==(const Spec&) const = default;
  auto operator<=>(const Spec&) const = default;
};

// A fully replicated spec describing `rank` dims.
Spec replicated(int rank);
// `spec` with its pending partial sums dropped: the dims of the value once
// resolved, and the layout of a gradient of every summand.
Spec without_partial(Spec spec);
// Text form for a mesh of `mesh_rank` axes (see above).
std::string to_string(const Spec& spec, int mesh_rank = 1);
// Parses the text form; throws InputError naming the text when it is malformed
// or names an axis outside the mesh, or uses an axis twice.
Spec parse_spec(std::string_view text, int mesh_rank = 1);
// The spec with its described dims permuted: result dim i is spec dim perm[i].
Spec permute(const Spec& spec, const std::vector<int>& perm);
// The local (per-device) shape of a tensor of global `shape` laid out as
// `spec` on `mesh`. Throws InputError naming the shape and spec when a sharded
// extent does not divide by its mesh axes.
std::vector<int64_t> local_shape(const std::vector<int64_t>& shape, const Spec& spec, const Mesh& mesh);

}  // namespace shardsynth::ir
