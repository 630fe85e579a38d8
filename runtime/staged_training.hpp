#pragma once
// `shard-run --train` on a pipeline-staged schedule: GPipe training.
//
// Each stage group keeps a TrainingState (runtime/training_state.hpp) of its
// stage graph under its own plan on the sub-mesh. Per optimizer step:
//  - forward: the stage's pipeline steps in order (runtime/pipeline.hpp),
//    every micro-batch's pass kept; the stage with the model output takes
//    each micro-batch's loss (scaled by 1 / micro-batches, so the step's
//    gradient is the mean's);
//  - backward: the same steps in reverse, each reversed: a forward send
//    becomes the receipt of that activation's gradient (summed over its
//    readers into the "<tensor>:send" output's gradient), a compute the
//    micro-batch's backward pass, a receive the send of the received
//    placeholder's gradient back to its producer's group, member i to
//    member i. Reversing every rank's program reverses the forward's total
//    order of transfers, so blocking sends cannot deadlock here either;
//  - a parameter tied across stages (GPT-2's lm_head in the last stage to
//    wte in the first) is stored in both: their gradients are exchanged
//    whole between the two groups (member i with member i) and summed, so
//    both copies take the same update. These bytes are not in any stage's
//    plan and are printed apart;
//  - one optimizer step per group.
// Only activations carry gradients back (not model inputs or integer
// tensors), as the stage plans price it (costs: a transfer twice in
// training).
#include <map>
#include <string>

#include "ir/graph.hpp"
#include "ir/staged_schedule.hpp"
#include "runtime/training.hpp"

namespace shardsynth::runtime {

struct StagedTrainCommand {
  std::string model_name;   // printed in the header
  std::string backend;      // backend name (runtime/backend.hpp)
  int micro_batches = 1;    // micro-batches per optimizer step (micro-batch m reads inputs seeded seed + m)
  bool check = false;       // compare with the unsharded reference over the same micro-batches
  TrainSetup setup;         // seed, parameters, options (the kernels come from the backend)
};

// Checks before any rank communicates: the staged schedule fits the graph,
// every stage's plan is a training plan, the options are valid. Throws
// ir::InputError, one line.
void validate_staged_training(const ir::Graph& graph, const ir::StagedSchedule& staged, const TrainOptions& options,
                              int micro_batches);

// Trains on every rank, prints on rank 0: the loss per step, per stage the
// collectives and point-to-point bytes against the plans', and with --check
// the loss, step-1 gradients and trained parameters against the unsharded
// reference. Returns 0, or 1 on a mismatch or failed check (rank 0).
int run_staged_train_command(const ir::Graph& graph, const ir::StagedSchedule& staged, const StagedTrainCommand& command);

}  // namespace shardsynth::runtime
