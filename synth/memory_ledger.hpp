#pragma once
// The planned memory ledger: every tensor one device holds under a plan, with
// its category, its bytes per device and the time steps it is held
// (synth/liveness.hpp's order), so that the runtime can hold and free the
// same tensors and count them (runtime/memory_ledger.hpp).
//
// Each tensor takes the interval of the problem node that holds it, the
// model's convention: an op's output and its following ops' outputs (gelu)
// share its node and are held over the node's interval (an inference
// activation until its last reader, a training one until its backward); in
// inference its parameters ("node.param") are held by its params follower
// (synth/followers.hpp), the whole step; in training a parameter's stored
// shard ("node.param"), its gradient buffer ("node.param:grad") and its Adam
// state ("node.param:state") are held by its storage node, the whole step,
// and its copy in the use's spec ("node.param:gathered", category
// transient, only when it has bytes: stored apart from its use, or a tied
// use) over its gathered followers' steps, its op's forward and backward. A
// recomputed output (synth/recompute.hpp) is held over two intervals: its
// node's (the forward, to its last forward read) and its recomputed
// follower's (from the recomputation to its backward); the saved follower's
// interval between them joins the first only when the output is kept. A
// tied parameter is held by the one it is tied to. So at every time step
// the ledger's bytes sum to the problem's usage (synth::peak_usage).
#include <cstdint>
#include <vector>

#include "ir/schedule.hpp"
#include "synth/lowering.hpp"

namespace shardsynth::synth {

// The ledger of `assignment`, in lowering's order (per graph node: its
// output, then each of its parameters' parts, the gathered copy last).
std::vector<ir::PlannedTensor> memory_ledger(const Lowered& lowered, const Assignment& assignment);

// Per time step 0 .. steps-1: the bytes of the tensors held then.
std::vector<int64_t> ledger_usage(const std::vector<ir::PlannedTensor>& tensors, int64_t steps);

}  // namespace shardsynth::synth
