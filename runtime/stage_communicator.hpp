#pragma once
// The communicator of one pipeline stage group, for run_sharded inside it.
//
// A staged schedule runs stage s on the ranks at coordinate s of mesh axis 0;
// the group is a mesh of its own made of the remaining axes (sub-mesh axis k
// is whole-mesh axis k + 1). On a 1-D mesh each group is a single device,
// seen as the mesh {1}: its collectives are local and send nothing.
// StageCommunicator views a whole-mesh communicator that way: rank, coords
// and mesh shape are the group's, collectives run along the matching
// whole-mesh axis, and bytes are counted here (the whole-mesh communicator
// counts them too), so a fresh StageCommunicator counts one run's bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/communicator.hpp"

namespace shardsynth::runtime {

// The mesh one stage group forms: axes 1.. of `mesh`, or {1} for a 1-D mesh.
std::vector<int64_t> stage_sub_mesh(const std::vector<int64_t>& mesh);

class StageCommunicator final : public Communicator {
 public:
  // `mesh_comm` is this rank's whole-mesh communicator; it must outlive this.
  explicit StageCommunicator(Communicator& mesh_comm);

  int rank() const override;                       // index in the group, row-major over the sub-mesh
  int size() const override;                       // devices in the group
  std::vector<int> coords() const override;        // coordinates on the sub-mesh
  std::vector<int64_t> mesh_shape() const override { return sub_mesh_; }

  Tensor all_gather(const Tensor& t, int dim, int axis, int64_t blocks = 1) override;
  Tensor reduce_scatter(const Tensor& t, int dim, int axis, int64_t blocks = 1) override;
  Tensor all_reduce(const Tensor& t, int axis) override;
  Tensor all_to_all(const Tensor& t, int src_dim, int dst_dim, int axis, int64_t dst_blocks = 1,
                    int64_t src_blocks = 1) override;
  // Peers are ranks of the group (rank()), sent over the whole-mesh communicator.
  void send(const Tensor& t, int peer) override;
  Tensor recv(const std::vector<int64_t>& shape, int peer) override;
  // Waits for the group only: a one-element all-reduce along each sub-mesh
  // axis in turn (not counted in bytes_sent()).
  void barrier() override;
  [[noreturn]] void abort(const std::string& message) override;

 private:
  // The whole-mesh axis of sub-mesh axis `axis`; -1 for the group of one of a 1-D mesh.
  int mesh_axis(int axis) const;
  // The world rank of group member `peer`.
  int world_rank(int peer) const;
  // Adds to this communicator's counts what the whole-mesh one counted since `before`.
  void count_since(const std::map<costs::CollectiveKind, int64_t>& before);

  Communicator& mesh_comm_;          // the whole mesh
  std::vector<int64_t> sub_mesh_;    // devices along each axis of the group's mesh
};

}  // namespace shardsynth::runtime
