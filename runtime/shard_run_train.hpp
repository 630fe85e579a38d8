#pragma once
// `shard-run --train`: train with an intra-op training plan on every rank,
// print the loss per step and the bytes sent against the cost model, and with
// --check hold the run to the unsharded reference (runtime/training.hpp).
#include <map>
#include <string>

#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"
#include "runtime/communicator.hpp"
#include "runtime/tensor.hpp"
#include "runtime/training.hpp"

namespace shardsynth::runtime {

// Relative tolerance of a training --check: the loss per step, every
// parameter's gradient in step 1 and every parameter after the last step,
// each against the unsharded run (fp32 sums run in another order).
inline constexpr double kTrainTolerance = 1e-4;
// Adam's extra allowance on trained parameters, in learning rates. A
// gradient that is zero in exact arithmetic (GPT-2's key bias: softmax
// ignores a shift shared by every key) is fp32 noise g, and Adam moves its
// parameter by about lr * g / (|g| + eps), which differs by a fraction of lr
// between any two summation orders. An element passes within
// kTrainTolerance * (largest magnitude) + kAdamNoiseSteps * lr * steps.
inline constexpr double kAdamNoiseSteps = 0.1;

// A training --check's tolerances. A graph with 16-bit tensors rounds every
// op's result to 8 (bfloat16) or 11 (float16) significant bits, and the
// sharded run rounds partial sums the unsharded one does not have: each
// rounding is off by up to 2^-9 (bfloat16) relative, and about ten of them
// stand between a layer's input and its gradients, so gradients are held to
// 5e-2 of the tensor's largest magnitude and the loss to 1e-2 (issue 30's
// bound against PyTorch). Adam turns a small gradient into a step of about
// lr whatever its size, so an element whose gradient is rounding noise may
// move the other way: trained parameters get 1e-2 plus lr per step.
struct TrainTolerances {
  double loss = kTrainTolerance;        // relative, per step
  double grads = kTrainTolerance;       // relative to each tensor's largest magnitude
  double params = kTrainTolerance;      // relative to each tensor's largest magnitude
  double adam_lr_steps = kAdamNoiseSteps;  // Adam's absolute allowance, in lr * steps
};
// The tolerances for `graph`: fp32's above, or the 16-bit ones when any tensor is 16-bit.
TrainTolerances train_tolerances(const ir::Graph& graph);

struct TrainCommand {
  std::string model_name;   // the model subcommand, for the header line
  std::string backend;      // backend name, for the header line
  bool check = false;       // run the unsharded reference on rank 0 and compare
  std::string output_path;  // where rank 0 writes the trained parameters (safetensors); empty = nowhere
  TrainSetup setup;         // seed, kernels, given parameters and inputs, options
};

// Checks, before any rank communicates, that `schedule` is a training plan
// and the options are valid. Throws ir::InputError, one line.
void validate_training(const ir::Schedule& schedule, const TrainOptions& options);

// Trains on every rank and prints on rank 0. Returns 0, or 1 when bytes or
// the check disagree, 2 when the output cannot be written.
int run_train_command(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, Communicator& comm,
                      const TrainCommand& command);

}  // namespace shardsynth::runtime
