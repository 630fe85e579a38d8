#pragma once
// What `shard-run` prints and `--check` holds a run to about memory: each
// rank's measured peak (runtime/memory_ledger.hpp) by category, next to the
// schedule's predicted figures (ir::ScheduleMemory). The planned categories
// at the peak (transient among them: the planned ":gathered" parameter
// copies) and the peak itself must be equal; unplanned transient buffers are
// measured and printed but not compared (the model counts none).
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "runtime/memory_ledger.hpp"

namespace shardsynth::runtime {

// Every rank's measurement, in rank order, on rank 0 (empty elsewhere).
// Every rank of MPI_COMM_WORLD calls it; sent outside the plan's byte count.
std::vector<MemoryMeasured> gather_measured(const MemoryMeasured& mine);

// The first disagreement, as one line: "memory: rank R: CATEGORY measured M
// bytes at its peak, predicted P bytes"; empty when every rank agrees.
// `adam`: whether the run's optimizer is Adam, whose state the model prices
// (with sgd the optimizer state is not compared).
std::string memory_mismatch(const ir::ScheduleMemory& predicted, const std::vector<MemoryMeasured>& ranks, bool adam);

// Prints (stdout) the predicted figures and each rank's measured ones, one
// row each (`steps`: step_names, for the peak's step), with a note on what is
// not compared.
void print_memory_table(const ir::ScheduleMemory& predicted, const std::vector<MemoryMeasured>& ranks,
                        const std::vector<std::string>& steps);

// shard-run's memory lines on rank 0: the table, and with `check` a line
// "check: memory ...: OK" or the first mismatch and FAILED. Returns 1 for a
// mismatch under `check`, else 0. Empty `ranks` (a schedule whose figures
// list no planned tensors) prints a note that nothing was measured.
int report_memory(const ir::ScheduleMemory& predicted, const std::vector<MemoryMeasured>& ranks,
                  const std::vector<std::string>& steps, bool check, bool adam);

}  // namespace shardsynth::runtime
