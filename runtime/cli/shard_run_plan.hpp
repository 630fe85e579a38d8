#pragma once
// In-process stage planning for `shard-run --stages S` (no --schedule): the
// shard-run executable's own code, linked with shardsynth_synth. The runtime
// library never includes synth/; only this file and shard_run_main.cpp, which
// are compiled into the executable alone, do.
#include <string>

#include <mpi.h>

#include "ir/graph.hpp"
#include "ir/staged_schedule.hpp"

namespace shardsynth::runtime {

struct PlanFlags {
  std::string mesh;                    // --mesh: the whole mesh, axis 0 = stages ("4x2")
  int stages = 0;                      // --stages: pipeline stages S (> 0 selects planning)
  std::string balance = "cost";        // --stage-balance: cost or params
  std::string cost_model = "alpha-beta";  // --cost-model
  int micro_batches = 1;               // --micro-batches, for the planner's pipeline time
};

// Rank 0 plans with synth::plan_stages and broadcasts the staged schedule's
// JSON over `world`; every rank returns the same schedule. A planning error
// (bad mesh, too few cut points, a solver failure) is rethrown on every rank
// as ir::InputError with rank 0's message, so every rank exits 2 alike.
ir::StagedSchedule plan_in_process(const ir::Graph& graph, const PlanFlags& flags, MPI_Comm world);

}  // namespace shardsynth::runtime
