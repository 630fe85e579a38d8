#pragma once
// Executing a resharding on a rank's local shard: the steps of
// costs::plan_resharding, run one by one through a Communicator.
#include <vector>

#include "ir/dtype.hpp"
#include "ir/mesh.hpp"
#include "ir/spec.hpp"
#include "runtime/communicator.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// Turns this rank's shard `local` of a tensor laid out as `from` into its
// shard under `to`. The specs describe the TRAILING dims of the tensor: spec
// dim d is tensor dim local.rank() - spec.rank() + d. A partial spec (+P on an
// axis) means each member of that axis' group holds a summand. Every rank of
// the mesh must call it with the same specs. Throws std::invalid_argument when
// `to` is unreachable from `from` or the specs describe more dims than `local`
// has, or when a partial int64 tensor would be summed. `dtype` is the
// model's element type of the tensor: its elements travel in its own size
// (runtime/packing.hpp's wire form), as the cost model prices them.
Tensor reshard(const Tensor& local, const ir::Spec& from, const ir::Spec& to, const ir::Mesh& mesh,
               Communicator& comm, ir::DType dtype = ir::DType::float32);

// The shard of `global` that the rank at `coords` holds under `spec` (the
// partial axes are ignored: the result is the full value, not a summand).
Tensor local_shard(const Tensor& global, const ir::Spec& spec, const ir::Mesh& mesh, const std::vector<int>& coords);

}  // namespace shardsynth::runtime
