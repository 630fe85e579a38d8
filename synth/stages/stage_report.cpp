#include "synth/stages/stage_report.hpp"

#include "ir/mesh.hpp"
#include "ir/schedule.hpp"
#include "ir/text_table.hpp"

namespace shardsynth::synth {

std::string format_stage_table(const ir::StagedSchedule& schedule, const std::string& unit) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& stage : schedule.stages) {
    const int64_t time = stage.compute + stage.communication;
    rows.push_back({std::to_string(stage.index), std::to_string(stage.nodes.size()),
                    stage.nodes.empty() ? "" : stage.nodes.front(), stage.nodes.empty() ? "" : stage.nodes.back(),
                    std::to_string(stage.params), std::to_string(stage.compute), std::to_string(stage.communication),
                    std::to_string(stage.memory), std::to_string(time), time == schedule.bottleneck ? "<-" : ""});
  }
  return ir::format_table({"stage", "nodes", "first", "last", "params", "compute (" + unit + ")",
                           "communication (" + unit + ")", "memory (bytes)", "time (" + unit + ")", "bottleneck"},
                          rows);
}

std::string format_transfer_table(const ir::StagedSchedule& schedule, const std::string& unit) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : schedule.transfers) {
    rows.push_back({t.tensor, std::to_string(t.from_stage), std::to_string(t.to_stage), t.spec, std::to_string(t.bytes),
                    std::to_string(t.cost)});
  }
  return ir::format_table({"tensor", "from", "to", "spec", "bytes per device", "cost (" + unit + ")"}, rows);
}

std::string stage_report(const StagePlan& plan, const std::string& unit) {
  const auto& s = plan.schedule;
  std::string text = "Pipeline stages (mesh " + ir::mesh_string(ir::Mesh{s.mesh, {}, {}}) + ", " +
                     std::to_string(s.stages.size()) + " stages, balance " + s.balance + "), per micro-batch:\n";
  text += format_stage_table(s, unit) + "\n\nTensors sent between stages, per micro-batch:\n";
  text += s.transfers.empty() ? "(none)\n" : format_transfer_table(s, unit) + "\n";
  text += "\nBottleneck: " + std::to_string(s.bottleneck) + " " + unit + " per micro-batch\n";
  text += "Pipeline time for " + std::to_string(s.micro_batches) + " micro-batches: " + std::to_string(plan.pipeline_time) +
          " " + unit + " (sum of stage times + " + std::to_string(s.micro_batches - 1) + " x bottleneck)\n";
  for (const auto& stage : s.stages) {
    text += "\nStage " + std::to_string(stage.index) + " nodes:";
    for (const auto& node : stage.nodes) text += " " + node;
    text += "\nStage " + std::to_string(stage.index) + " directives (cost " + std::to_string(stage.schedule.cost) + " " +
            unit + (stage.schedule.proven_optimal ? ", proven optimal" : "") + "):\n";
    text += ir::directives_text(stage.schedule);
  }
  return text;
}

}  // namespace shardsynth::synth
