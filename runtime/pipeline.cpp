#include "runtime/pipeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

namespace shardsynth::runtime {

StageLayout stage_layout(const std::vector<int64_t>& mesh) {
  if (mesh.empty()) throw std::invalid_argument("stage layout: the mesh has no axes");
  StageLayout layout;
  layout.stages = static_cast<int>(mesh[0]);
  for (std::size_t a = 1; a < mesh.size(); ++a) layout.group_size *= static_cast<int>(mesh[a]);
  return layout;
}

int stage_of_rank(const StageLayout& layout, int rank) { return rank / layout.group_size; }

int peer_rank(const StageLayout& layout, int rank, int stage) {
  if (stage < 0 || stage >= layout.stages) throw std::invalid_argument("no stage " + std::to_string(stage));
  return stage * layout.group_size + rank % layout.group_size;
}

std::vector<PipelineStep> stage_steps(const std::vector<ir::StageTransfer>& transfers, int stage, int micro_batches) {
  std::vector<int> in, out;
  for (int i = 0; i < static_cast<int>(transfers.size()); ++i) {
    if (transfers[i].to_stage == stage) in.push_back(i);
    if (transfers[i].from_stage == stage) out.push_back(i);
  }
  std::sort(in.begin(), in.end(), [&](int a, int b) {
    return std::tie(transfers[a].from_stage, transfers[a].tensor) < std::tie(transfers[b].from_stage, transfers[b].tensor);
  });
  std::sort(out.begin(), out.end(), [&](int a, int b) {
    return std::tie(transfers[a].to_stage, transfers[a].tensor) < std::tie(transfers[b].to_stage, transfers[b].tensor);
  });
  std::vector<PipelineStep> steps;
  for (int m = 0; m < micro_batches; ++m) {
    for (int i : in) steps.push_back({StepKind::receive, m, i});
    steps.push_back({StepKind::compute, m, -1});
    for (int i : out) steps.push_back({StepKind::send, m, i});
  }
  return steps;
}

}  // namespace shardsynth::runtime
