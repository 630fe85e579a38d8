#pragma once
// Pipeline stage planning: cut a model into S contiguous stages, one per
// group of mesh axis 0 (`--mesh 4x2 --stages 4`: 4 groups of 2 devices), and
// shard each stage inside its group with the CEGIS solver on the sub-mesh
// (the mesh without axis 0).
//
//   auto graph = ir::build_gpt2(ir::gpt2_preset("small"));
//   auto mesh = ir::parse_mesh("4x2");
//   auto model = costs::make_cost_model("alpha-beta");
//   ir::StagedSchedule plan = synth::plan_stages(graph, mesh, *model, {}, {.stages = 4});
//
// Two cut rules:
//  - params: fairscale's auto-shard rule (stage_cuts.hpp), contiguous stages
//    balanced by parameter count;
//  - cost (default): an exact dynamic program over candidate cut points that
//    minimizes the bottleneck stage time (intra-stage optimum plus outgoing
//    transfers), every range of layers solved once per structural signature
//    (stage_range.hpp); fairscale's placement is compared too, so cost is
//    never worse than params.
// Tensors crossing a cut are sent replicated (costs/transfer.hpp prices the
// send over mesh axis 0), so both sides of a cut agree on the spec.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "costs/cost_model.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/staged_schedule.hpp"
#include "synth/synthesizer.hpp"

namespace shardsynth::synth {

enum class StageBalance { params, cost };

struct StageOptions {
  int stages = 1;                             // S: pipeline stages = mesh axis-0 extent
  StageBalance balance = StageBalance::cost;  // cut-point rule
  int micro_batches = 1;                      // M, for the pipeline time report
};

// "params" or "cost"; throws ir::InputError naming any other text.
StageBalance parse_stage_balance(std::string_view text);
std::string stage_balance_name(StageBalance balance);

// How often the per-range results were reused.
struct RangeCacheStats {
  int64_t ranges = 0;  // ranges of layers asked for (DP and final evaluation)
  int64_t solved = 0;  // distinct structural signatures, i.e. CEGIS runs
  int64_t reused = 0;  // asks answered from the cache
};

struct StagePlan {
  ir::StagedSchedule schedule;  // the plan (see ir/staged_schedule.hpp)
  std::vector<int> cuts;        // program-order positions where stages start, stage 1..S-1
  std::vector<int> candidates;  // program-order positions the cost rule chose its cuts among (empty for params)
  int64_t pipeline_time = 0;    // sum of stage times + (M - 1) * bottleneck, cost-model unit
  RangeCacheStats cache;        // per-range solver statistics
};

// The group sub-mesh: `mesh` without axis 0 (a one-device mesh when the mesh is 1-D).
ir::Mesh stage_sub_mesh(const ir::Mesh& mesh);

// Throws ir::InputError (exit 2 in the CLI) when the mesh's axis 0 != stages,
// when options carry pins or a plan filter (they name the whole graph), when
// the model has fewer candidate cut points than stages - 1, when
// fairscale's rule does not give exactly S non-empty stages (params), or
// when no cut placement fits the memory budget (cost).
StagePlan plan_stage_layout(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                            const SynthOptions& options, const StageOptions& stage_options);

// The plan for the given cuts (program-order positions where stages 1..S-1
// start, ascending), priced exactly: one transfer per reading stage. Throws
// ir::InputError when a cut is out of order or a stage does not fit the
// memory budget.
StagePlan plan_with_cuts(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                         const SynthOptions& options, const StageOptions& stage_options, const std::vector<int>& cuts);

// plan_stage_layout(...).schedule.
ir::StagedSchedule plan_stages(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                               const SynthOptions& options, const StageOptions& stage_options);

}  // namespace shardsynth::synth
