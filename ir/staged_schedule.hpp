#pragma once
// A pipeline-staged plan: the graph cut into S contiguous stages, stage s run
// by the device group at coordinate s of the mesh's axis 0 (`--mesh 4x2
// --stages 4`: 4 groups of 2 devices), each stage sharded inside its group by
// its own intra-op Schedule on the sub-mesh (the remaining axes), and the
// tensors that cross a cut sent point to point between groups.
//
// Stage graphs (stage_graph()): a stage's nodes, plus one placeholder per
// tensor it receives (named as the producing node, with its type) and one
// output node per tensor it sends (named "<producer>:send"); the last stage
// keeps the model's own output. Every stage runs on one micro-batch: the model
// flags describe one micro-batch, and `--micro-batches M` streams M of them.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/graph.hpp"
#include "ir/schedule.hpp"

namespace shardsynth::ir {

// The value of the JSON form's "format" field.
inline constexpr const char* kStagedScheduleFormat = "shardsynth.staged_schedule/1";

struct StageTransfer {
  std::string tensor;   // producing node's name (its output tensor)
  int from_stage = 0;   // stage that produces it
  int to_stage = 0;     // stage that reads it (one transfer per reading stage)
  std::string spec;     // spec it is sent in: the sending stage's spec of its "<tensor>:send" output
  int64_t bytes = 0;    // bytes each device of the sending group sends, per micro-batch
  int64_t cost = 0;     // transfer time per micro-batch, in the cost model's unit

  bool operator==(const StageTransfer&) const = default;
};

struct Stage {
  int index = 0;                   // 0-based; the group's coordinate on mesh axis 0
  std::vector<std::string> nodes;  // graph nodes this stage runs, in graph order (boundary nodes included)
  Schedule schedule;               // the intra-stage plan for stage_graph(graph, nodes), on the sub-mesh
  int64_t compute = 0;             // ops' own cost (compute and in-op collectives), cost-model unit
  int64_t communication = 0;       // resharding inside the stage plus its outgoing transfers, cost-model unit
  int64_t memory = 0;              // peak bytes per device of the group over its step (one micro-batch in flight)
  int64_t params = 0;              // parameter elements the stage holds (tied parameters counted once, where stored)

  bool operator==(const Stage&) const = default;
};

struct StagedSchedule {
  std::vector<int64_t> mesh;              // the whole mesh; axis 0 indexes stages
  std::string cost_model;                 // cost model preset name
  std::string balance;                    // "params" (fairscale's rule) or "cost" (the exact DP)
  int micro_batches = 1;                  // micro-batches the pipeline time assumes
  int64_t bottleneck = 0;                 // max over stages of (intra-stage cost + outgoing transfers), per micro-batch
  std::vector<Stage> stages;              // in pipeline order
  std::vector<StageTransfer> transfers;   // ordered by (from_stage, tensor, to_stage)

  bool operator==(const StagedSchedule&) const = default;
};

nlohmann::json to_json(const StagedSchedule& schedule);
// Throws InputError naming the missing or mistyped field.
StagedSchedule staged_schedule_from_json(const nlohmann::json& json);

// The graph stage `nodes` runs (see the header comment). Throws InputError
// naming a node that is not in `graph`.
Graph stage_graph(const Graph& graph, const std::vector<std::string>& nodes);

// The suffix of a stage graph's output node for a sent tensor.
inline constexpr const char* kSendSuffix = ":send";
// The target of a stage graph's placeholder that stands for an activation
// computed in an earlier stage (not a model input): in training its
// gradient goes back to that stage.
inline constexpr const char* kReceivedTarget = "received";

}  // namespace shardsynth::ir
