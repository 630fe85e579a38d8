#pragma once
// A Communicator over MPI: one rank per device of the mesh, one MPI
// communicator per mesh axis (MPI_Comm_split: colour = the other coordinates,
// key = the coordinate on the axis, so group member j has coordinate j).
// MPI must be initialized before construction and finalized after
// destruction; every MPI call is checked (mpi_check.hpp). The constructor
// sets MPI_ERRORS_RETURN on the world communicator it is given, so failures
// reach the check instead of MPI's default handler.
//
// A tensor of a 16-bit dtype (float16, bfloat16) travels as its 16-bit
// patterns (MPI_UINT16_T), 2 bytes per element; its sums add pairs of
// 16-bit values in fp32 and round each partial sum to the dtype, with an
// operation declared non-commutative so that every member adds in the same
// order and gets the same bits (replicas stay equal).
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/communicator.hpp"

namespace shardsynth::runtime {

class MpiCommunicator final : public Communicator {
 public:
  // Aborts every rank with a clear message when MPI is not initialized or the
  // size of `world` differs from the number of devices of `mesh_shape`.
  explicit MpiCommunicator(std::vector<int64_t> mesh_shape, MPI_Comm world = MPI_COMM_WORLD);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<int> coords() const override { return coords_; }
  std::vector<int64_t> mesh_shape() const override { return mesh_shape_; }

  Tensor all_gather(const Tensor& t, int dim, int axis, int64_t blocks = 1) override;
  Tensor reduce_scatter(const Tensor& t, int dim, int axis, int64_t blocks = 1) override;
  Tensor all_reduce(const Tensor& t, int axis) override;
  Tensor all_to_all(const Tensor& t, int src_dim, int dst_dim, int axis, int64_t dst_blocks = 1,
                    int64_t src_blocks = 1) override;
  // On the world communicator, one tag for all point-to-point messages.
  void send(const Tensor& t, int peer) override;
  Tensor recv(const std::vector<int64_t>& shape, int peer) override;
  void barrier() override;
  bool any_rank(bool flag) override;
  [[noreturn]] void abort(const std::string& message) override;

 private:
  MPI_Comm axis_comm(int axis);
  MPI_Op half_sum(ir::DType dtype) const;
  void check_peer(int peer) const;

  std::vector<int64_t> mesh_shape_;     // devices along each mesh axis
  MPI_Comm world_ = MPI_COMM_WORLD;     // duplicate of the world communicator given
  int rank_ = 0;                        // this rank in world_, row-major over the mesh
  int size_ = 0;                        // ranks in world_
  std::vector<int> coords_;             // this rank's coordinate on each mesh axis
  std::vector<MPI_Comm> axis_comms_;    // per mesh axis: the group along it, ranked by coordinate
  MPI_Op bfloat16_sum_ = MPI_OP_NULL;   // the sum of bfloat16 patterns
  MPI_Op float16_sum_ = MPI_OP_NULL;    // the sum of float16 patterns
};

}  // namespace shardsynth::runtime
