#include "runtime/stage_communicator.hpp"

#include <cstdlib>
#include <stdexcept>

namespace shardsynth::runtime {

std::vector<int64_t> stage_sub_mesh(const std::vector<int64_t>& mesh) {
  if (mesh.size() <= 1) return {1};
  return {mesh.begin() + 1, mesh.end()};
}

StageCommunicator::StageCommunicator(Communicator& mesh_comm)
    : mesh_comm_(mesh_comm), sub_mesh_(stage_sub_mesh(mesh_comm.mesh_shape())) {}

int StageCommunicator::size() const {
  int n = 1;
  for (int64_t e : sub_mesh_) n *= static_cast<int>(e);
  return n;
}

int StageCommunicator::rank() const { return mesh_comm_.rank() % size(); }

std::vector<int> StageCommunicator::coords() const {
  const std::vector<int> all = mesh_comm_.coords();
  if (all.size() <= 1) return {0};
  return {all.begin() + 1, all.end()};
}

int StageCommunicator::mesh_axis(int axis) const {
  if (axis < 0 || axis >= static_cast<int>(sub_mesh_.size())) {
    throw std::invalid_argument("stage mesh axis " + std::to_string(axis) + " out of range");
  }
  return mesh_comm_.mesh_shape().size() <= 1 ? -1 : axis + 1;
}

int StageCommunicator::world_rank(int peer) const {
  if (peer < 0 || peer >= size()) throw std::invalid_argument("no group member " + std::to_string(peer));
  return mesh_comm_.rank() - rank() + peer;
}

void StageCommunicator::count_since(const std::map<costs::CollectiveKind, int64_t>& before) {
  for (const auto& [kind, bytes] : mesh_comm_.bytes_sent()) {
    const auto it = before.find(kind);
    const int64_t earlier = it == before.end() ? 0 : it->second;
    if (bytes != earlier || it == before.end()) count_bytes(kind, bytes - earlier);
  }
}

Tensor StageCommunicator::all_gather(const Tensor& t, int dim, int axis, int64_t blocks) {
  const int a = mesh_axis(axis);
  if (a < 0) {
    count_bytes(costs::CollectiveKind::all_gather, 0);
    return concat_parts({t}, dim, blocks);
  }
  const auto before = mesh_comm_.bytes_sent();
  Tensor out = mesh_comm_.all_gather(t, dim, a, blocks);
  count_since(before);
  return out;
}

Tensor StageCommunicator::reduce_scatter(const Tensor& t, int dim, int axis, int64_t blocks) {
  const int a = mesh_axis(axis);
  if (a < 0) {
    count_bytes(costs::CollectiveKind::reduce_scatter, 0);
    return slice_part(t, dim, 1, 0, blocks);
  }
  const auto before = mesh_comm_.bytes_sent();
  Tensor out = mesh_comm_.reduce_scatter(t, dim, a, blocks);
  count_since(before);
  return out;
}

Tensor StageCommunicator::all_reduce(const Tensor& t, int axis) {
  const int a = mesh_axis(axis);
  if (a < 0) {
    count_bytes(costs::CollectiveKind::all_reduce, 0);
    return t;
  }
  const auto before = mesh_comm_.bytes_sent();
  Tensor out = mesh_comm_.all_reduce(t, a);
  count_since(before);
  return out;
}

Tensor StageCommunicator::all_to_all(const Tensor& t, int src_dim, int dst_dim, int axis, int64_t dst_blocks,
                                     int64_t src_blocks) {
  const int a = mesh_axis(axis);
  if (a < 0) {
    count_bytes(costs::CollectiveKind::all_to_all, 0);
    return concat_parts({slice_part(t, dst_dim, 1, 0, dst_blocks)}, src_dim, src_blocks);
  }
  const auto before = mesh_comm_.bytes_sent();
  Tensor out = mesh_comm_.all_to_all(t, src_dim, dst_dim, a, dst_blocks, src_blocks);
  count_since(before);
  return out;
}

void StageCommunicator::send(const Tensor& t, int peer) {
  mesh_comm_.send(t, world_rank(peer));
  count_p2p_bytes(t.numel() * static_cast<int64_t>(sizeof(float)));
}

Tensor StageCommunicator::recv(const std::vector<int64_t>& shape, int peer) { return mesh_comm_.recv(shape, world_rank(peer)); }

void StageCommunicator::abort(const std::string& message) {
  mesh_comm_.abort(message);
  std::abort();  // the whole-mesh abort does not return; satisfies [[noreturn]]
}

void StageCommunicator::barrier() {
  if (mesh_comm_.mesh_shape().size() <= 1) return;  // a group of one
  for (std::size_t axis = 1; axis < mesh_comm_.mesh_shape().size(); ++axis) {
    mesh_comm_.all_reduce(Tensor{{1}, {0.0f}}, static_cast<int>(axis));
  }
}

}  // namespace shardsynth::runtime
