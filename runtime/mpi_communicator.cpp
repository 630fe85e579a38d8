#include "runtime/mpi_communicator.hpp"

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/sanitizer.hpp"
#include "costs/alpha_beta_cost_model.hpp"
#include "runtime/mpi_check.hpp"
#include "runtime/half.hpp"
#include "runtime/packing.hpp"

#if defined(SHARDSYNTH_ASAN)
// ASan+UBSan builds (scripts/sanitize) only. OpenMPI and the libraries under
// it allocate at MPI_Init and never free, and are built without frame
// pointers: LeakSanitizer can name their library (scripts/lsan.supp
// suppresses by library name) only when malloc stacks are unwound the slow
// way. That costs about 10x on allocation-heavy code such as Z3, so only the
// programs that hold this communicator (every MPI program of the project)
// default to it; ASAN_OPTIONS in the environment still overrides it.
extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }
#endif

namespace shardsynth::runtime {
namespace {

constexpr int kP2pTag = 7;                       // tag of every send()/recv() message


using costs::CollectiveKind;

int to_int_count(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) throw std::length_error("MPI message of more than 2^31 elements");
  return static_cast<int>(n);
}

// Bytes an element of `t` takes on the wire: 2 for a 16-bit dtype, else an fp32 lane's 4.
int64_t element_bytes(const Tensor& t) { return t.holds_bits() ? 2 : static_cast<int64_t>(sizeof(float)); }

// The elementwise sum of 16-bit patterns of `dtype`: each pair added in fp32, rounded.
template <ir::DType dtype>
void add_halves(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = half_bits(half_value(a[i], dtype) + half_value(b[i], dtype), dtype);
}

// What MPI moves of a tensor: its storage as it is, fp32 values or 16-bit patterns.
const void* storage(const Tensor& t) {
  return t.holds_bits() ? static_cast<const void*>(t.bits.data()) : static_cast<const void*>(t.data.data());
}
void* storage(Tensor& t) { return t.holds_bits() ? static_cast<void*>(t.bits.data()) : static_cast<void*>(t.data.data()); }
std::size_t stored_elements(const Tensor& t) { return t.holds_bits() ? t.bits.size() : t.data.size(); }
MPI_Datatype mpi_type(const Tensor& t) { return t.holds_bits() ? MPI_UINT16_T : MPI_FLOAT; }

[[noreturn]] void abort_world(MPI_Comm world, int rank, const std::string& message) {
  std::fprintf(stderr, "shardsynth rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  MPI_Abort(world, 1);
  std::abort();
}

}  // namespace

MpiCommunicator::MpiCommunicator(std::vector<int64_t> mesh_shape, MPI_Comm world) : mesh_shape_(std::move(mesh_shape)) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    std::fprintf(stderr, "shardsynth: MpiCommunicator needs MPI_Init first\n");
    std::abort();
  }
  SHARDSYNTH_MPI_CHECK(MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN));
  SHARDSYNTH_MPI_CHECK(MPI_Comm_dup(world, &world_));
  SHARDSYNTH_MPI_CHECK(MPI_Comm_rank(world_, &rank_));
  SHARDSYNTH_MPI_CHECK(MPI_Comm_size(world_, &size_));
  int64_t devices = 1;
  for (int64_t e : mesh_shape_) {
    if (e < 1) abort_world(world_, rank_, "mesh extent " + std::to_string(e) + " is not positive");
    devices *= e;
  }
  if (devices != size_) {
    abort_world(world_, rank_,
                "the mesh has " + std::to_string(devices) + " devices but MPI runs " + std::to_string(size_) +
                    " ranks; start one rank per device (mpirun -np " + std::to_string(devices) + ")");
  }
  // Row-major coordinates: the last axis varies fastest.
  coords_.assign(mesh_shape_.size(), 0);
  int rest = rank_;
  for (int a = static_cast<int>(mesh_shape_.size()) - 1; a >= 0; --a) {
    coords_[a] = static_cast<int>(rest % mesh_shape_[a]);
    rest /= static_cast<int>(mesh_shape_[a]);
  }
  for (std::size_t axis = 0; axis < mesh_shape_.size(); ++axis) {
    int colour = 0;  // row-major index over the other axes
    for (std::size_t a = 0; a < mesh_shape_.size(); ++a) {
      if (a != axis) colour = colour * static_cast<int>(mesh_shape_[a]) + coords_[a];
    }
    MPI_Comm comm = MPI_COMM_NULL;
    SHARDSYNTH_MPI_CHECK(MPI_Comm_split(world_, colour, coords_[axis], &comm));
    axis_comms_.push_back(comm);
  }
  SHARDSYNTH_MPI_CHECK(MPI_Op_create(&add_halves<ir::DType::bfloat16>, 0, &bfloat16_sum_));
  SHARDSYNTH_MPI_CHECK(MPI_Op_create(&add_halves<ir::DType::float16>, 0, &float16_sum_));
}

MPI_Op MpiCommunicator::half_sum(ir::DType dtype) const {
  return dtype == ir::DType::bfloat16 ? bfloat16_sum_ : float16_sum_;
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Comm& c : axis_comms_) MPI_Comm_free(&c);
  MPI_Op_free(&bfloat16_sum_);
  MPI_Op_free(&float16_sum_);
  MPI_Comm_free(&world_);
}

MPI_Comm MpiCommunicator::axis_comm(int axis) {
  if (axis < 0 || axis >= static_cast<int>(axis_comms_.size())) {
    throw std::invalid_argument("mesh axis " + std::to_string(axis) + " out of range");
  }
  return axis_comms_[axis];
}

Tensor MpiCommunicator::all_gather(const Tensor& t, int dim, int axis, int64_t blocks) {
  MPI_Comm comm = axis_comm(axis);
  const int n = group_size(axis);
  Tensor received = zeros({n * t.numel()}, t.dtype);
  const int count = to_int_count(stored_elements(t));
  SHARDSYNTH_MPI_CHECK(MPI_Allgather(storage(t), count, mpi_type(t), storage(received), count, mpi_type(t), comm));
  count_bytes(CollectiveKind::all_gather, costs::ring_bytes_sent(CollectiveKind::all_gather, n, t.numel() * element_bytes(t)));
  return unpack_parts(received, t.shape, dim, n, blocks);
}

Tensor MpiCommunicator::reduce_scatter(const Tensor& t, int dim, int axis, int64_t blocks) {
  MPI_Comm comm = axis_comm(axis);
  const int n = group_size(axis);
  const Tensor packed = pack_parts(t, dim, n, blocks);
  Tensor out = zeros(part_shape(t.shape, dim, n), t.dtype);
  const MPI_Op sum = t.holds_bits() ? half_sum(t.dtype) : MPI_SUM;
  SHARDSYNTH_MPI_CHECK(MPI_Reduce_scatter_block(storage(packed), storage(out), to_int_count(stored_elements(out)),
                                                mpi_type(t), sum, comm));
  count_bytes(CollectiveKind::reduce_scatter,
              costs::ring_bytes_sent(CollectiveKind::reduce_scatter, n, t.numel() * element_bytes(t)));
  return out;
}

Tensor MpiCommunicator::all_reduce(const Tensor& t, int axis) {
  MPI_Comm comm = axis_comm(axis);
  const int n = group_size(axis);
  Tensor out = zeros(t.shape, t.dtype);
  const MPI_Op sum = t.holds_bits() ? half_sum(t.dtype) : MPI_SUM;
  SHARDSYNTH_MPI_CHECK(
      MPI_Allreduce(storage(t), storage(out), to_int_count(stored_elements(t)), mpi_type(t), sum, comm));
  count_bytes(CollectiveKind::all_reduce, costs::ring_bytes_sent(CollectiveKind::all_reduce, n, t.numel() * element_bytes(t)));
  return out;
}

Tensor MpiCommunicator::all_to_all(const Tensor& t, int src_dim, int dst_dim, int axis, int64_t dst_blocks,
                                   int64_t src_blocks) {
  MPI_Comm comm = axis_comm(axis);
  const int n = group_size(axis);
  const Tensor packed = pack_parts(t, dst_dim, n, dst_blocks);
  Tensor received = zeros(packed.shape, t.dtype);
  const int count = to_int_count(stored_elements(packed) / n);
  SHARDSYNTH_MPI_CHECK(MPI_Alltoall(storage(packed), count, mpi_type(t), storage(received), count, mpi_type(t), comm));
  count_bytes(CollectiveKind::all_to_all, costs::ring_bytes_sent(CollectiveKind::all_to_all, n, t.numel() * element_bytes(t)));
  return unpack_parts(received, part_shape(t.shape, dst_dim, n), src_dim, n, src_blocks);
}

bool MpiCommunicator::any_rank(bool flag) {
  int mine = flag ? 1 : 0, any = 0;
  SHARDSYNTH_MPI_CHECK(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, world_));
  return any != 0;
}

void MpiCommunicator::check_peer(int peer) const {
  if (peer < 0 || peer >= size_ || peer == rank_) {
    throw std::invalid_argument("rank " + std::to_string(rank_) + ": no peer rank " + std::to_string(peer) + " among " +
                                std::to_string(size_) + " ranks");
  }
}

void MpiCommunicator::send(const Tensor& t, int peer) {
  check_peer(peer);
  if (is_half(t.dtype)) throw std::invalid_argument("send: 16-bit tensors travel between stages as float32 only");
  SHARDSYNTH_MPI_CHECK(MPI_Send(t.data.data(), to_int_count(t.data.size()), MPI_FLOAT, peer, kP2pTag, world_));
  count_p2p_bytes(t.numel() * static_cast<int64_t>(sizeof(float)));
}

Tensor MpiCommunicator::recv(const std::vector<int64_t>& shape, int peer) {
  check_peer(peer);
  Tensor out = zeros(shape);
  MPI_Status status;
  const int expected = to_int_count(out.data.size());
  SHARDSYNTH_MPI_CHECK(MPI_Recv(out.data.data(), expected, MPI_FLOAT, peer, kP2pTag, world_, &status));
  int received = 0;
  SHARDSYNTH_MPI_CHECK(MPI_Get_count(&status, MPI_FLOAT, &received));
  if (received != expected) {
    throw std::runtime_error("rank " + std::to_string(rank_) + " expected " + std::to_string(expected) +
                             " elements from rank " + std::to_string(peer) + " but got " + std::to_string(received));
  }
  return out;
}

void MpiCommunicator::barrier() { SHARDSYNTH_MPI_CHECK(MPI_Barrier(world_)); }

void MpiCommunicator::abort(const std::string& message) { abort_world(world_, rank_, message); }

}  // namespace shardsynth::runtime
