#include "runtime/cuda/nccl_communicator.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "runtime/cuda/cuda_check.hpp"
#include "runtime/cuda/device_buffer.hpp"
#include "runtime/mpi_check.hpp"
#include "runtime/half.hpp"
#include "runtime/packing.hpp"
#include "costs/alpha_beta_cost_model.hpp"

namespace shardsynth::runtime::cuda {
namespace {

constexpr int64_t kFloatBytes = sizeof(float);  // an fp32 element (or lane) on the wire


using costs::CollectiveKind;

// This rank's index among the ranks on its node.
int local_rank(MPI_Comm world) {
  MPI_Comm node = MPI_COMM_NULL;
  SHARDSYNTH_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int rank = 0;
  SHARDSYNTH_MPI_CHECK(MPI_Comm_rank(node, &rank));
  SHARDSYNTH_MPI_CHECK(MPI_Comm_free(&node));
  return rank;
}

// A 16-bit tensor's collective (runtime/half.hpp): its patterns on the
// device, moved by NCCL as bfloat16 or float16 (sums in the dtype), 2 bytes an element.
ncclDataType_t nccl_half(ir::DType dtype) { return dtype == ir::DType::bfloat16 ? ncclBfloat16 : ncclFloat16; }

// `bits` as a flat tensor of `dtype` (its 16-bit storage).
Tensor flat_bits(std::vector<uint16_t> bits, ir::DType dtype) {
  Tensor t{{static_cast<int64_t>(bits.size())}, {}, dtype, std::move(bits)};
  return t;
}

}  // namespace

std::vector<uint16_t> NcclCommunicator::half_collective(CollectiveKind kind, const std::vector<uint16_t>& values,
                                                        std::size_t out_count, ir::DType dtype, int axis) {
  ncclComm_t comm = axis_comm(axis);
  const int n = group_size(axis);
  const ncclDataType_t type = nccl_half(dtype);
  const DeviceHalfBuffer send(values);  // the tensor's 16-bit storage as it is
  DeviceHalfBuffer recv(out_count);
  switch (kind) {
    case CollectiveKind::all_gather:
      SHARDSYNTH_NCCL_CHECK(ncclAllGather(send.data(), recv.data(), values.size(), type, comm, stream_));
      break;
    case CollectiveKind::reduce_scatter:
      SHARDSYNTH_NCCL_CHECK(ncclReduceScatter(send.data(), recv.data(), out_count, type, ncclSum, comm, stream_));
      break;
    case CollectiveKind::all_reduce:
      SHARDSYNTH_NCCL_CHECK(ncclAllReduce(send.data(), recv.data(), out_count, type, ncclSum, comm, stream_));
      break;
    case CollectiveKind::all_to_all: {
      const std::size_t count = values.size() / n;
      SHARDSYNTH_NCCL_CHECK(ncclGroupStart());
      for (int j = 0; j < n; ++j) {
        SHARDSYNTH_NCCL_CHECK(ncclSend(send.data() + j * count, count, type, j, comm, stream_));
        SHARDSYNTH_NCCL_CHECK(ncclRecv(recv.data() + j * count, count, type, j, comm, stream_));
      }
      SHARDSYNTH_NCCL_CHECK(ncclGroupEnd());
      break;
    }
    case CollectiveKind::slice:
      throw std::logic_error("slice is no collective");
  }
  std::vector<uint16_t> bits(out_count);
  recv.download(bits, stream_);
  return bits;
}

NcclCommunicator::NcclCommunicator(std::vector<int64_t> mesh_shape, MPI_Comm world) : mpi_(std::move(mesh_shape), world) {
  int devices = 0;
  const cudaError_t found = cudaGetDeviceCount(&devices);
  if (found != cudaSuccess || devices == 0) {
    mpi_.abort(std::string("the cuda backend needs a CUDA device, found none (") +
               (found != cudaSuccess ? cudaGetErrorString(found) : "0 devices") + ")");
  }
  device_ = local_rank(world) % devices;
  SHARDSYNTH_CUDA_CHECK(cudaSetDevice(device_));
  SHARDSYNTH_CUDA_CHECK(cudaStreamCreate(&stream_));  // blocking: ordered with the kernels' default stream

  ncclUniqueId id{};
  if (mpi_.rank() == 0) SHARDSYNTH_NCCL_CHECK(ncclGetUniqueId(&id));
  SHARDSYNTH_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world));
  SHARDSYNTH_NCCL_CHECK(ncclCommInitRank(&world_comm_, mpi_.size(), id, mpi_.rank()));

  const std::vector<int64_t> shape = mpi_.mesh_shape();
  const std::vector<int> at = mpi_.coords();
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    int colour = 0;  // row-major index over the other axes
    for (std::size_t a = 0; a < shape.size(); ++a) {
      if (a != axis) colour = colour * static_cast<int>(shape[a]) + at[a];
    }
    ncclComm_t comm = nullptr;
    SHARDSYNTH_NCCL_CHECK(ncclCommSplit(world_comm_, colour, at[axis], &comm, nullptr));
    axis_comms_.push_back(comm);
  }
}

NcclCommunicator::~NcclCommunicator() {
  for (ncclComm_t c : axis_comms_) ncclCommDestroy(c);  // unchecked: may run while aborting
  if (world_comm_) ncclCommDestroy(world_comm_);
  if (stream_) cudaStreamDestroy(stream_);
}

ncclComm_t NcclCommunicator::axis_comm(int axis) const {
  if (axis < 0 || axis >= static_cast<int>(axis_comms_.size())) {
    throw std::invalid_argument("mesh axis " + std::to_string(axis) + " out of range");
  }
  return axis_comms_[axis];
}

Tensor NcclCommunicator::all_gather(const Tensor& t, int dim, int axis, int64_t blocks) {
  ncclComm_t comm = axis_comm(axis);
  const int n = group_size(axis);
  if (t.holds_bits()) {
    const Tensor flat = flat_bits(half_collective(CollectiveKind::all_gather, t.bits, t.bits.size() * n, t.dtype, axis), t.dtype);
    count_bytes(CollectiveKind::all_gather, costs::ring_bytes_sent(CollectiveKind::all_gather, n, t.numel() * 2));
    return unpack_parts(flat, t.shape, dim, n, blocks);
  }
  DeviceBuffer send(t.data.size()), recv(t.data.size() * n);
  send.upload(t.data, stream_);
  SHARDSYNTH_NCCL_CHECK(ncclAllGather(send.data(), recv.data(), t.data.size(), ncclFloat, comm, stream_));
  Tensor received = zeros({static_cast<int64_t>(recv.size())});
  recv.download(received.data, stream_);
  count_bytes(CollectiveKind::all_gather, costs::ring_bytes_sent(CollectiveKind::all_gather, n, t.numel() * kFloatBytes));
  return unpack_parts(received, t.shape, dim, n, blocks);
}

Tensor NcclCommunicator::reduce_scatter(const Tensor& t, int dim, int axis, int64_t blocks) {
  ncclComm_t comm = axis_comm(axis);
  const int n = group_size(axis);
  Tensor out = zeros(part_shape(t.shape, dim, n), t.dtype);
  const Tensor packed = pack_parts(t, dim, n, blocks);
  if (t.holds_bits()) {
    out.bits = half_collective(CollectiveKind::reduce_scatter, packed.bits, out.bits.size(), t.dtype, axis);
    count_bytes(CollectiveKind::reduce_scatter, costs::ring_bytes_sent(CollectiveKind::reduce_scatter, n, t.numel() * 2));
    return out;
  }
  DeviceBuffer send(packed.data.size()), recv(out.data.size());
  send.upload(packed.data, stream_);
  SHARDSYNTH_NCCL_CHECK(
      ncclReduceScatter(send.data(), recv.data(), out.data.size(), ncclFloat, ncclSum, comm, stream_));
  recv.download(out.data, stream_);
  count_bytes(CollectiveKind::reduce_scatter, costs::ring_bytes_sent(CollectiveKind::reduce_scatter, n, t.numel() * kFloatBytes));
  return out;
}

Tensor NcclCommunicator::all_reduce(const Tensor& t, int axis) {
  ncclComm_t comm = axis_comm(axis);
  const int n = group_size(axis);
  Tensor out = zeros(t.shape, t.dtype);
  if (t.holds_bits()) {
    out.bits = half_collective(CollectiveKind::all_reduce, t.bits, t.bits.size(), t.dtype, axis);
    count_bytes(CollectiveKind::all_reduce, costs::ring_bytes_sent(CollectiveKind::all_reduce, n, t.numel() * 2));
    return out;
  }
  DeviceBuffer buffer(t.data.size());
  buffer.upload(t.data, stream_);
  SHARDSYNTH_NCCL_CHECK(
      ncclAllReduce(buffer.data(), buffer.data(), t.data.size(), ncclFloat, ncclSum, comm, stream_));
  buffer.download(out.data, stream_);
  count_bytes(CollectiveKind::all_reduce, costs::ring_bytes_sent(CollectiveKind::all_reduce, n, t.numel() * kFloatBytes));
  return out;
}

Tensor NcclCommunicator::all_to_all(const Tensor& t, int src_dim, int dst_dim, int axis, int64_t dst_blocks,
                                    int64_t src_blocks) {
  ncclComm_t comm = axis_comm(axis);
  const int n = group_size(axis);
  const Tensor packed = pack_parts(t, dst_dim, n, dst_blocks);
  if (t.holds_bits()) {
    const Tensor flat =
        flat_bits(half_collective(CollectiveKind::all_to_all, packed.bits, packed.bits.size(), t.dtype, axis), t.dtype);
    count_bytes(CollectiveKind::all_to_all, costs::ring_bytes_sent(CollectiveKind::all_to_all, n, t.numel() * 2));
    return unpack_parts(flat, part_shape(t.shape, dst_dim, n), src_dim, n, src_blocks);
  }
  const std::size_t count = packed.data.size() / n;
  DeviceBuffer send(packed.data.size()), recv(packed.data.size());
  send.upload(packed.data, stream_);
  SHARDSYNTH_NCCL_CHECK(ncclGroupStart());
  for (int j = 0; j < n; ++j) {
    SHARDSYNTH_NCCL_CHECK(ncclSend(send.data() + j * count, count, ncclFloat, j, comm, stream_));
    SHARDSYNTH_NCCL_CHECK(ncclRecv(recv.data() + j * count, count, ncclFloat, j, comm, stream_));
  }
  SHARDSYNTH_NCCL_CHECK(ncclGroupEnd());
  Tensor received = zeros({static_cast<int64_t>(packed.data.size())});
  recv.download(received.data, stream_);
  count_bytes(CollectiveKind::all_to_all, costs::ring_bytes_sent(CollectiveKind::all_to_all, n, t.numel() * kFloatBytes));
  return unpack_parts(received, part_shape(t.shape, dst_dim, n), src_dim, n, src_blocks);
}

}  // namespace shardsynth::runtime::cuda

namespace shardsynth::runtime::cuda {

void NcclCommunicator::send(const Tensor& t, int peer) {
  if (peer < 0 || peer >= size() || peer == rank()) throw std::invalid_argument("no peer rank " + std::to_string(peer));
  DeviceBuffer buffer(t.data.size());
  buffer.upload(t.data, stream_);
  SHARDSYNTH_NCCL_CHECK(ncclSend(buffer.data(), t.data.size(), ncclFloat, peer, world_comm_, stream_));
  SHARDSYNTH_CUDA_CHECK(cudaStreamSynchronize(stream_));
  count_p2p_bytes(t.numel() * kFloatBytes);
}

Tensor NcclCommunicator::recv(const std::vector<int64_t>& shape, int peer) {
  if (peer < 0 || peer >= size() || peer == rank()) throw std::invalid_argument("no peer rank " + std::to_string(peer));
  Tensor out = zeros(shape);
  DeviceBuffer buffer(out.data.size());
  SHARDSYNTH_NCCL_CHECK(ncclRecv(buffer.data(), out.data.size(), ncclFloat, peer, world_comm_, stream_));
  buffer.download(out.data, stream_);  // waits for the stream
  return out;
}

}  // namespace shardsynth::runtime::cuda
