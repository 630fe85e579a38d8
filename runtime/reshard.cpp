#include "runtime/reshard.hpp"

#include <stdexcept>
#include <string>

#include "costs/collective.hpp"
#include "runtime/packing.hpp"

namespace shardsynth::runtime {
namespace {

using costs::CollectiveKind;

// The tensor dim of spec dim `spec_dim`, for a tensor of `rank` dims.
int tensor_dim(int rank, const ir::Spec& spec, int spec_dim) { return rank - spec.rank() + spec_dim; }
int tensor_dim(const Tensor& t, const ir::Spec& spec, int spec_dim) { return tensor_dim(t.rank(), spec, spec_dim); }

}  // namespace

Tensor reshard(const Tensor& local, const ir::Spec& from, const ir::Spec& to, const ir::Mesh& mesh,
               Communicator& comm, ir::DType dtype) {
  if (from.rank() > local.rank() || to.rank() != from.rank()) {
    throw std::invalid_argument("reshard: specs of " + std::to_string(from.rank()) + " and " +
                                std::to_string(to.rank()) + " dims for a tensor of " + std::to_string(local.rank()) +
                                " dims");
  }
  const auto plan = costs::plan_resharding(from, to, mesh);
  if (!plan) {
    throw std::invalid_argument("reshard: " + ir::to_string(to, mesh.rank()) + " is unreachable from " +
                                ir::to_string(from, mesh.rank()));
  }
  const std::vector<int> coords = comm.coords();
  // Dims are counted on the model's tensor; the wire form only adds trailing lanes.
  const int rank = local.rank();
  const bool summable = wire_lanes(dtype) == 1;
  Tensor t = to_wire(local, dtype);
  ir::Spec spec = from;
  for (const costs::Collective& step : *plan) {
    const ir::Spec next = costs::apply(step, spec);
    const int axis = step.mesh_axis;
    const bool sums = step.kind == CollectiveKind::all_reduce || step.kind == CollectiveKind::reduce_scatter;
    if (sums && !summable) {
      throw std::invalid_argument("reshard: a partial sum of a " + ir::dtype_name(dtype) + " tensor cannot be reduced");
    }
    switch (step.kind) {
      case CollectiveKind::slice:
        // The new axis is the minor-most of the dim: its part of the local shard.
        t = slice_part(t, tensor_dim(rank, spec, step.dst_dim), mesh.shape[axis], coords[axis],
                       next.blocks_of(step.dst_dim));
        break;
      case CollectiveKind::all_gather:
        t = comm.all_gather(t, tensor_dim(rank, spec, step.src_dim), axis, spec.blocks_of(step.src_dim));
        break;
      case CollectiveKind::all_to_all:
        t = comm.all_to_all(t, tensor_dim(rank, spec, step.src_dim), tensor_dim(rank, spec, step.dst_dim), axis,
                            next.blocks_of(step.dst_dim), spec.blocks_of(step.src_dim));
        break;
      case CollectiveKind::all_reduce:
        t = comm.all_reduce(t, axis);
        break;
      case CollectiveKind::reduce_scatter:
        t = comm.reduce_scatter(t, tensor_dim(rank, spec, step.dst_dim), axis, next.blocks_of(step.dst_dim));
        break;
    }
    spec = next;
  }
  return from_wire(t, dtype);
}

Tensor local_shard(const Tensor& global, const ir::Spec& spec, const ir::Mesh& mesh, const std::vector<int>& coords) {
  if (spec.rank() > global.rank()) throw std::invalid_argument("local_shard: spec describes more dims than the tensor has");
  Tensor t = global;
  for (int d = 0; d < spec.rank(); ++d) {
    for (int axis : spec.dims[d]) {
      t = slice_part(t, tensor_dim(t, spec, d), mesh.shape[axis], coords.at(axis), spec.blocks_of(d));
    }
  }
  return t;
}

}  // namespace shardsynth::runtime
