#pragma once
// Backward kernels: for every op kind of the forward table
// (runtime/reference.hpp), the vector-Jacobian product of that kernel on the
// same local shards. The executor's training pass (runtime/training.hpp)
// calls the entry of a node's kind with the call its forward ran, so a
// backward kernel sees exactly what the forward saw: the operands as the op
// read them (after any fwd_pre resharding), the local parameter shards, and
// the offsets of this rank's shard in the global tensors.
//
// A kernel returns the gradient of each operand and parameter of its LOCAL
// computation. Where the forward contracted a factor this shard holds only a
// part of, that gradient is this rank's summand (partial); the executor
// resolves it with the collectives the cost model prices
// (costs/op_cost.hpp). Kernels never communicate.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/reference.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

struct BackwardCall {
  const KernelCall& forward;   // the call the forward ran: operands as read, local params, offsets, out_shape
  const Tensor& output;        // the forward kernel's local result (softmax and the activations reuse it)
  const Tensor& grad_output;   // d loss / d output on this rank, the shape of `output`
};

struct Gradients {
  std::vector<std::optional<Tensor>> inputs;  // per tensor operand, in operand order; nullopt where none flows (integer ids)
  std::map<std::string, Tensor> params;       // per parameter name of forward.params ("weight", "bias"), its shape
};

// Runs one node's backward on local (or whole) tensors.
using BackwardFn = std::function<Gradients(const BackwardCall& call)>;

// op kind -> backward kernel, for every kind reference_kernels() has
// (placeholders have none). CPU, with OpenBLAS GEMMs; 16-bit operands are
// read widened to fp32 (runtime/fp32_operands.hpp).
const std::map<std::string, BackwardFn>& reference_backward_kernels();

}  // namespace shardsynth::runtime
