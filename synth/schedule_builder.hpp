#pragma once
// Turns a winning assignment into Slapo-style directives:
//  - shard(param, dim) for every sharded parameter dim, in its stored layout;
//  - sync(fwd_pre, "A->B") on an op whose operand arrives in spec A but is
//    consumed in spec B (arg=i when the op has several tensor inputs);
//  - sync(fwd_post, "A+P->A") on an op that all-reduces its partial result;
//  - sync(fwd_post, "A->B") on the producer of a graph output that must be
//    resharded, when the output is its only user (else fwd_pre on the output).
#include "ir/schedule.hpp"
#include "synth/lowering.hpp"

namespace shardsynth::synth {

ir::Schedule build_schedule(const Lowered& lowered, const Assignment& assignment, const std::string& cost_model,
                            int64_t cost, bool proven_optimal);

// The assignment a schedule describes: for every problem node, the strategy
// whose output and parameter specs are the schedule's and whose operand
// specs are the producers' specs after the schedule's fwd_pre syncs (a graph
// output's: after its producer's fwd_post syncs that start from that spec). Throws
// ir::InputError naming the node when the schedule lacks it or describes no
// legal strategy of it.
Assignment assignment_from_schedule(const Lowered& lowered, const ir::Schedule& schedule);

}  // namespace shardsynth::synth
