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
#include <cstdint>
#include <string>
#include <vector>

#include "synth/lowering.hpp"

namespace shardsynth::synth {

// One row of the table above the Total line (an op, a `|-arg` resharding or a graph output).
struct IterationRow {
  std::string name;      // the graph node, or "|-producer" for an operand's resharding
  std::string in_spec;   // the InSpec column (empty cells stay empty)
  std::string out_spec;  // the OutSpec column
  int64_t cost = 0;      // the row's cost, in the cost model's unit
};

std::string format_iteration_table(const Lowered& lowered, const Assignment& assignment);
// The rows of that table, without the Total line.
std::vector<IterationRow> iteration_rows(const Lowered& lowered, const Assignment& assignment);
// Lays out rows and a total exactly as format_iteration_table does (used to
// re-print a recorded iteration from a trace).
std::string format_iteration_rows(const std::vector<IterationRow>& rows, int64_t total);
// The InSpec column for one strategy of one problem node: "SRxRR".
std::string in_spec_text(const Lowered& lowered, int node, int strategy);
// "=================== Iter 3 ===================".
std::string iteration_header(int index);
// The problem nodes that decide something: every node but the followers
// (synth/followers.hpp), whose strategies their leaders' choices fix.
std::vector<int> decision_nodes(const Lowered& lowered);
// "[x = 0, fc1 = 2, fc2 = 0, output = 0]": the model, one entry per decision node.
std::string model_text(const Lowered& lowered, const Assignment& assignment);
// The same from the decision nodes' labels and their entries of the assignment.
std::string model_text(const std::vector<std::string>& labels, const Assignment& assignment);

}  // namespace shardsynth::synth
