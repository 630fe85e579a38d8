#pragma once
// Pipeline stages on the mesh and the GPipe forward schedule of micro-batches.
//
// Layout. Stage s runs on the ranks at coordinate s of mesh axis 0 (ranks are
// row-major, so those are the contiguous ranks s*G .. s*G+G-1 with G the
// devices per group); the group's own mesh is the remaining axes
// (stage_communicator.hpp). Group member i of stage s and member i of stage t
// sit at the same sub-mesh coordinates: a shard in one spec means the same
// slice in both groups, so transfers pair member i with member i.
//
// Schedule. Forward only, GPipe style: micro-batches stream through the
// stages, and stage s runs micro-batch m once it has received m's tensors.
// Each rank of stage s repeats, for m = 0 .. M-1:
//   receive every transfer into s   (ordered by from_stage, tensor),
//   compute micro-batch m,
//   send every transfer out of s    (ordered by to_stage, tensor).
// A tensor read by several later stages goes to each directly from its
// producer (a skip connection across several cuts is one transfer, not a
// relay). With blocking point-to-point calls this never deadlocks: the key
// (m, to_stage, from_stage, tensor) orders all transfers totally, and every
// rank meets its own transfers in increasing key order (its receives have
// to_stage = s, its sends to_stage > s), so the smallest unfinished transfer
// always has both ends waiting on it.
#include <cstdint>
#include <vector>

#include "ir/staged_schedule.hpp"

namespace shardsynth::runtime {

struct StageLayout {
  int stages = 1;      // stage groups = extent of mesh axis 0
  int group_size = 1;  // devices per group = product of the other extents
};

// The layout for `mesh` (axis 0 indexes stages).
StageLayout stage_layout(const std::vector<int64_t>& mesh);
// The stage rank `rank` belongs to.
int stage_of_rank(const StageLayout& layout, int rank);
// The rank of stage `stage` at the same sub-mesh position as `rank`.
int peer_rank(const StageLayout& layout, int rank, int stage);

enum class StepKind { receive, compute, send };

struct PipelineStep {
  StepKind kind = StepKind::compute;  // what the stage does
  int micro_batch = 0;                // 0-based micro-batch index
  int transfer = -1;                  // receive/send: index into StagedSchedule::transfers; -1 for compute
  bool operator==(const PipelineStep&) const = default;
};

// The steps every rank of `stage` takes, in order (see the header comment).
std::vector<PipelineStep> stage_steps(const std::vector<ir::StageTransfer>& transfers, int stage, int micro_batches);

}  // namespace shardsynth::runtime
