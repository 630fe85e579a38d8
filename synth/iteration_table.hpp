#pragma once
// The per-iteration cost table, laid out as the Slapo PR prints it:
//
//  Name    InSpec    OutSpec    Cost
// ------  --------  ---------  -------
// fc1     SRxRR     SR         0
// |-x     RR        SR         0
// ...
// output  SR        RR         131072
// Total                        131072
//
// A row per op that has its own spec variable (InSpec: its tensor inputs and
// shown parameters, joined by 'x', weights in the op's [in, out]
// orientation), a `|-arg` row per tensor operand for its resharding, a row per
// graph output for the final resharding to replicated, and the total.
#include <string>

#include "synth/lowering.hpp"

namespace shardsynth::synth {

std::string format_iteration_table(const Lowered& lowered, const Assignment& assignment);
// The InSpec column for one strategy of one problem node: "SRxRR".
std::string in_spec_text(const Lowered& lowered, int node, int strategy);
// "=================== Iter 3 ===================".
std::string iteration_header(int index);
// "[x = 0, fc1 = 2, fc2 = 0, output = 0]": the model, one entry per problem node.
std::string model_text(const Lowered& lowered, const Assignment& assignment);

}  // namespace shardsynth::synth
