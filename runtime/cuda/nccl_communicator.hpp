#pragma once
// A Communicator over NCCL, one GPU per MPI rank. MPI does the bootstrap and
// the host-side bookkeeping: an MpiCommunicator (held inside) checks the mesh
// against the MPI job, gives rank and coordinates, and serves barrier() and
// abort() and the any_rank vote. A 16-bit tensor (runtime/half.hpp) moves
// as ncclBfloat16 / ncclFloat16, 2 bytes an element. NCCL moves the data: one world ncclComm initialised from an
// ncclUniqueId made on rank 0 and broadcast over MPI, then ncclCommSplit per
// mesh axis (colour = the other coordinates, key = the coordinate on the
// axis, so group member j has coordinate j). The device is cudaSetDevice(
// node-local rank % device count). Every collective packs along the tensor
// dim with the shared runtime/packing.hpp, copies host -> device, runs
// ncclAllGather / ncclReduceScatter / ncclAllReduce / grouped
// ncclSend+ncclRecv (all-to-all; point to point on the
// world communicator) on this rank's stream, copies back and
// unpacks; bytes are counted with costs::ring_bytes_sent, as MpiCommunicator does.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/communicator.hpp"
#include "runtime/mpi_communicator.hpp"

namespace shardsynth::runtime::cuda {

class NcclCommunicator final : public Communicator {
 public:
  // MPI must be initialized; aborts every rank on a mesh/job mismatch or a
  // machine without a CUDA device.
  explicit NcclCommunicator(std::vector<int64_t> mesh_shape, MPI_Comm world = MPI_COMM_WORLD);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return mpi_.rank(); }
  int size() const override { return mpi_.size(); }
  std::vector<int> coords() const override { return mpi_.coords(); }
  std::vector<int64_t> mesh_shape() const override { return mpi_.mesh_shape(); }

  Tensor all_gather(const Tensor& t, int dim, int axis, int64_t blocks = 1) override;
  Tensor reduce_scatter(const Tensor& t, int dim, int axis, int64_t blocks = 1) override;
  Tensor all_reduce(const Tensor& t, int axis) override;
  Tensor all_to_all(const Tensor& t, int src_dim, int dst_dim, int axis, int64_t dst_blocks = 1,
                    int64_t src_blocks = 1) override;
  // ncclSend / ncclRecv on the world NCCL communicator (peer = world rank),
  // then a stream synchronize, so each blocks like its MPI counterpart.
  void send(const Tensor& t, int peer) override;
  Tensor recv(const std::vector<int64_t>& shape, int peer) override;
  void barrier() override { mpi_.barrier(); }
  bool any_rank(bool flag) override { return mpi_.any_rank(flag); }
  [[noreturn]] void abort(const std::string& message) override { mpi_.abort(message); }

  int device() const { return device_; }  // the CUDA device this rank uses

 private:
  ncclComm_t axis_comm(int axis) const;
  // A collective of `kind` on 16-bit patterns `values` (a tensor's storage,
  // dtype bfloat16 or float16) along `axis`, NCCL summing in the dtype: the
  // `out_count` patterns received.
  std::vector<uint16_t> half_collective(costs::CollectiveKind kind, const std::vector<uint16_t>& values,
                                        std::size_t out_count, ir::DType dtype, int axis);

  MpiCommunicator mpi_;                  // bootstrap, coordinates, barrier and abort
  int device_ = 0;                       // CUDA device of this rank
  cudaStream_t stream_ = nullptr;        // stream of every copy and collective
  ncclComm_t world_comm_ = nullptr;      // NCCL communicator over all ranks
  std::vector<ncclComm_t> axis_comms_;   // per mesh axis: the group along it, ranked by coordinate
};

}  // namespace shardsynth::runtime::cuda
