#pragma once
// Follower nodes: how one decision holds memory over more than one interval.
//
// The Problem gives each node one liveness interval, but what a decision
// holds may live differently: an inference op's output until its last
// reader and its parameters the whole step; a recomputed output twice; a
// training parameter's gathered copy only around its op's forward and
// backward. A follower is a problem node of its own over one such interval
// (NodeRole::follower), whose strategy is a function of its leader's: one
// strategy per distinct usage of the leader's strategies, tied to the leader
// by an edge that is 0 for the matching pair and kForbidden for every other.
// It adds no cost; the reductions and folding merge it back into its leader
// as a usage piece (synth/solver/folding.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "synth/liveness.hpp"
#include "synth/lowered.hpp"

namespace shardsynth::synth {

// Adds a follower of problem node `leader` (an op or a storage node), live
// over `live`, named `label`, holding `usage_of[s]` bytes when the leader
// takes strategy s; its label records `kind`, the leader's graph vertex and
// `param` (gathered copies: the parameter's index in the op's params). Its
// edge is appended after every problem edge so far. Returns its node index.
int add_follower(Lowered& out, int leader, FollowerKind kind, int param, const std::string& label, const Interval& live,
                 const std::vector<int64_t>& usage_of);

// Per problem node: the followers that follow it, in problem order.
std::vector<std::vector<int>> followers_of(const Lowered& lowered);

// Sets every follower of `assignment` to the one strategy its leader's
// choice allows (after a leader changed, or for an assignment that names
// the leaders only: -1 at the followers).
void follow_leaders(const Lowered& lowered, Assignment& assignment);

// In inference, one follower per op with untied parameters: "NODE:params",
// live the whole step, holding its untied parameters' shards in the spec
// each op strategy reads them in (costs::param_bytes). The op node then
// holds its outputs only.
void add_param_followers(Lowered& out);

// In training, a parameter read in another spec than it is stored in is
// gathered into its use's spec at its op's forward and again at its
// backward (costs::storage_cost's two moves), and a tied use always reads a
// copy of the stored parameter made in its own spec: per such parameter,
// "NODE.param:gathered" over the op's forward step and
// "NODE.param:regathered" over its backward step, holding the copy's bytes
// (the use spec's shard). An untied parameter's followers follow its storage
// node (the bytes when the choice's stored spec is not its use spec, else 0;
// none when no choice stores apart), a tied one's follow its op. A
// recomputation's re-gather (synth/recompute.hpp) is not modelled: it is
// scratch, as a resharded operand is.
void add_gathered_followers(Lowered& out);

}  // namespace shardsynth::synth
