#pragma once
// Training with a plan: forward, loss, backward, gradient syncs and the
// optimizer step, on every rank's local shards.
//
// The forward pass is run_sharded's (runtime/forward_pass.hpp), keeping each
// op's call. The loss (runtime/loss.hpp) is taken on the graph output
// gathered whole, on every rank alike; its gradient is sliced back to the
// output's spec. The backward pass then visits the ops in reverse order:
//  - an op's output gradient is held in its output spec without partial
//    axes; when a fwd_post resolved the op's partial result, the gradient is
//    resharded to the result's dims (the gradient of a sum is the same for
//    every summand);
//  - the op's backward kernel (runtime/backward.hpp) gives each operand's
//    gradient partial on every mesh axis that shards a factor the operand
//    lacks (the axes its VJP contracts over); an operand read as a partial
//    sum gets its partial axes back replicated;
//  - an activation's gradient is resharded from that spec to its producer's
//    output spec without partial axes and summed over the producer's uses
//    (the dual of the forward resharding: an all-gather becomes a
//    reduce-scatter or a slice, a slice an all-gather);
//  - a parameter's gradient is resolved to the parameter's spec (the
//    data-parallel all-reduce); a bias added to a partial result counts on
//    the partial group's leader alone, as in the forward pass;
//  - a parameter tied to another (lm_head to wte) reads the stored parameter
//    resharded to its own spec before the forward pass, and sends its
//    resolved gradient back to the stored spec.
// Gradients flow along exactly the edges costs::edge_cost charges in
// training (not from placeholders or integer tensors), through
// costs::plan_resharding's steps, so the bytes counted are the ones priced.
//
// Mixed precision (costs/precision.hpp). A value of a 16-bit dtype is
// rounded to it wherever an op makes it (runtime/half.hpp): each forward
// kernel's result, each backward kernel's gradient, each sum of gradients.
// A 16-bit parameter is stored in its dtype, and its gradient is reduced in
// the policy's reduce dtype; the optimizer keeps an fp32 master copy (with
// fp32 Adam moments) in the state spec, updates it with the gradient widened
// to fp32, and rounds it back to the parameter's dtype before moving it to
// the stored spec. The loss is taken in fp32 on the 16-bit output, as
// torch.autocast runs cross-entropy, and its gradient is rounded to the
// output's dtype. float16 parameters train with dynamic loss scaling
// (runtime/loss_scaler.hpp): a step with a non-finite gradient on any rank
// (an uncounted vote, Communicator::any_rank) leaves the master weights and
// Adam as they were, but still moves the parameters as the plan prices.
//
// Excluded from the byte count: gathering gradients and parameters whole
// for the result, and, for a graph without its loss head (a graph file's
// logits, the MLP), gathering the output whole for the loss. The built-in
// language models' training graphs end in their loss head, planned and
// counted like any op.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "costs/collective.hpp"
#include "costs/precision.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"
#include "runtime/backward.hpp"
#include "runtime/communicator.hpp"
#include "runtime/loss.hpp"
#include "runtime/loss_scaler.hpp"
#include "runtime/memory_ledger.hpp"
#include "runtime/optimizer.hpp"
#include "runtime/reference.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

struct TrainOptions {
  int steps = 1;                                  // optimizer steps, each on the same batch
  double lr = 1e-3;                               // learning rate
  OptimizerKind optimizer = OptimizerKind::adam;  // sgd or adam
};

struct TrainSetup {
  uint64_t seed = 0;                                                // seeds parameters, inputs and the mse target
  const std::map<std::string, KernelFn>* kernels = &reference_kernels();             // forward kernels by op kind
  const std::map<std::string, BackwardFn>* backward = &reference_backward_kernels();  // backward kernels by op kind
  std::map<std::string, Tensor> params;  // whole parameters by full (or tied-to) name; the rest are seeded
  std::map<std::string, Tensor> inputs;  // whole inputs by placeholder name; the rest are seeded
  TrainOptions options;                  // steps, learning rate, optimizer
  costs::PrecisionPolicy precision;      // reduce dtype, master dtype (float32 only), fp16 loss scaling
  LossScalerOptions scaler;              // the dynamic loss scale, for float16 parameters
};

struct TrainResult {
  LossChoice loss;                                     // the loss minimized
  std::vector<double> losses;                          // per step: the loss before that step's update (mean over micro-batches)
  std::map<std::string, Tensor> first_grads;           // per stored parameter (full name): its gradient in step 1, whole
  std::map<std::string, Tensor> params;                // per stored parameter (full name): its value after the last step,
                                                       // whole (the fp32 master copy for a 16-bit parameter)
  int64_t skipped = 0;                                 // float16: steps skipped for a non-finite gradient
  double loss_scale = 1;                               // float16: the loss scale after the last step (else 1)
  std::map<costs::CollectiveKind, int64_t> sent;       // bytes this rank sent for the plan's collectives, all steps
  std::map<costs::CollectiveKind, int64_t> predicted;  // the cost model's ring bytes for the same steps
  int64_t recomputed = 0;                              // op forwards run again for the backward (checkpoints), all steps
  std::optional<MemoryMeasured> memory;                // this rank's largest step, when the schedule lists planned tensors
};

// Trains `graph` under `schedule` on this rank (every rank of the mesh calls
// it alike). Throws ir::InputError when the schedule is not a training plan
// or does not fit; std::invalid_argument for a kernel failure. When the
// schedule's memory figures list its planned tensors, each step holds and
// frees them as planned and measures what it held (runtime/memory_ledger.hpp).
TrainResult train_sharded(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, Communicator& comm,
                          const TrainSetup& setup);

// Whole inputs of micro-batch m, by placeholder name.
using MicroBatchInputs = std::function<std::map<std::string, Tensor>(int micro_batch)>;

// The same training unsharded, in this process: the reference --check
// compares with. With micro-batches, each step sums the gradients of
// micro-batches 0 .. micro_batches-1 (inputs_of(m); setup.inputs when null),
// each loss scaled by 1 / micro_batches, before its one optimizer step.
TrainResult train_reference(const ir::Graph& graph, const TrainSetup& setup, int micro_batches = 1,
                            const MicroBatchInputs& inputs_of = nullptr);

}  // namespace shardsynth::runtime
