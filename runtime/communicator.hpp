#pragma once
// The interface a rank uses to talk to the other ranks of an N-D device mesh.
//
// Ranks are numbered row-major over the mesh: on a 2x4 mesh rank r sits at
// coords {r / 4, r % 4}. A collective runs along ONE mesh axis: its group is
// the ranks that differ only in that axis' coordinate, ordered by it (member j
// of the group has coordinate j on the axis).
//
// Byte accounting. bytes_sent() counts, per collective kind, the bytes THIS
// rank sends under the ring algorithm, so it compares with the cost model's
// ring formulas. With n the group size and fp32 elements (4 bytes):
//   all_gather:     (n-1)/n * B, B = bytes of the gathered (output) tensor
//                   = (n-1) * bytes of the local input;
//   reduce_scatter: (n-1)/n * B, B = bytes of the local (input) tensor;
//   all_reduce:     2(n-1)/n * B, B = bytes of the tensor, rounded down;
//   all_to_all:     (n-1)/n * B, B = bytes of the local (input) tensor.
// An element of a 16-bit dtype (Tensor::dtype float16 or bfloat16) counts 2
// bytes instead of 4.
// A group of one sends nothing (0 is still recorded for the kind); slice is
// never recorded (it is local).
//
// Point to point. send()/recv() move one tensor between two ranks of the mesh
// (by rank(), any two ranks, no mesh axis involved); the pipeline runtime uses
// them to hand activations from one stage group to another. Both block: send
// returns once the buffer may be reused (it may wait for the matching recv),
// recv once the tensor has arrived. Messages between one pair of ranks arrive
// in the order they were sent, so both sides only have to agree on the order.
// p2p_bytes_sent() counts the bytes of every tensor this rank sent.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "costs/collective.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;               // this rank, 0 .. size()-1, row-major over the mesh
  virtual int size() const = 0;               // number of ranks = devices in the mesh
  virtual std::vector<int> coords() const = 0;  // this rank's position on each mesh axis, axis 0 first
  virtual std::vector<int64_t> mesh_shape() const = 0;  // devices along each mesh axis
  int group_size(int axis) const { return static_cast<int>(mesh_shape().at(axis)); }

  // Concatenates the group's pieces (member order) along tensor dim `dim`;
  // with `blocks` > 1 per block, as concat_parts.
  virtual Tensor all_gather(const Tensor& t, int dim, int axis, int64_t blocks = 1) = 0;
  // Sums `t` over the group and keeps this member's part along `dim`
  // (slice_part with the member index and `blocks`).
  virtual Tensor reduce_scatter(const Tensor& t, int dim, int axis, int64_t blocks = 1) = 0;
  // Sums `t` over the group; every member gets the sum.
  virtual Tensor all_reduce(const Tensor& t, int axis) = 0;
  // Moves the axis from `src_dim` to `dst_dim`: splits `t` along `dst_dim`
  // into n parts (with `dst_blocks`), sends part j to member j, and
  // concatenates the received parts along `src_dim` in member order (with
  // `src_blocks`: the block count of src_dim when it is blocked).
  virtual Tensor all_to_all(const Tensor& t, int src_dim, int dst_dim, int axis, int64_t dst_blocks = 1,
                            int64_t src_blocks = 1) = 0;
  // Sends `t` (its elements; the receiver knows the shape) to rank `peer`.
  virtual void send(const Tensor& t, int peer) = 0;
  // Receives a tensor of `shape` from rank `peer`. Throws std::runtime_error
  // naming both ranks when the message holds a different number of elements.
  virtual Tensor recv(const std::vector<int64_t>& shape, int peer) = 0;
  // Waits until every rank of the mesh arrives.
  virtual void barrier() = 0;
  // Whether `flag` is true on any rank of the mesh (every rank calls it). A
  // control message (fp16 loss scaling's overflow vote), not a collective of
  // the plan: not counted. Throws std::logic_error where not implemented.
  virtual bool any_rank(bool /*flag*/) { throw std::logic_error("this communicator has no any_rank vote"); }
  // Prints `message` once (from this rank) and makes every rank exit non-zero.
  [[noreturn]] virtual void abort(const std::string& message) = 0;

  // Bytes this rank has sent so far, per kind (see the header comment).
  const std::map<costs::CollectiveKind, int64_t>& bytes_sent() const { return bytes_sent_; }
  // Bytes this rank has sent so far with send().
  int64_t p2p_bytes_sent() const { return p2p_bytes_sent_; }

 protected:
  void count_bytes(costs::CollectiveKind kind, int64_t bytes) { bytes_sent_[kind] += bytes; }
  void count_p2p_bytes(int64_t bytes) { p2p_bytes_sent_ += bytes; }

 private:
  std::map<costs::CollectiveKind, int64_t> bytes_sent_;  // per kind: bytes sent by this rank, ring volume
  int64_t p2p_bytes_sent_ = 0;                            // bytes sent by this rank with send()
};

}  // namespace shardsynth::runtime
