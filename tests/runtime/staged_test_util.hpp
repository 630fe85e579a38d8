#pragma once
// Hand-made staged schedules for the runtime tests: a model cut at given
// nodes, every stage planned with every tensor replicated on the sub-mesh,
// and one transfer (in RRR... spec) per tensor a later stage reads.
#include <set>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/op_table.hpp"
#include "ir/spec.hpp"
#include "ir/staged_schedule.hpp"

namespace shardsynth::runtime::testing {

inline std::string replicated_text(const ir::TensorType& type, int mesh_rank) {
  return ir::to_string(ir::replicated(static_cast<int>(type.shape.size())), mesh_rank);
}

// `graph` cut before each node of `cuts` (graph order), on `mesh` (axis 0 =
// stages; the sub-mesh is the rest, {1} for a 1-D mesh).
inline ir::StagedSchedule replicated_stages(const ir::Graph& graph, const std::vector<int64_t>& mesh,
                                            const std::vector<std::string>& cuts) {
  const std::vector<int64_t> sub = mesh.size() > 1 ? std::vector<int64_t>(mesh.begin() + 1, mesh.end()) : std::vector<int64_t>{1};
  const int sub_rank = static_cast<int>(sub.size());
  ir::StagedSchedule staged{mesh, "alpha-beta", "cuts", 1, 0, {}, {}};
  std::size_t next_cut = 0;
  for (ir::Vertex v : graph.topological_order()) {
    const std::string& name = graph.node(v).name;
    if (staged.stages.empty() || (next_cut < cuts.size() && cuts[next_cut] == name)) {
      if (!staged.stages.empty()) ++next_cut;
      ir::Stage stage;
      stage.index = static_cast<int>(staged.stages.size());
      staged.stages.push_back(stage);
    }
    staged.stages.back().nodes.push_back(name);
  }
  std::vector<ir::Graph> graphs;
  for (auto& stage : staged.stages) {
    graphs.push_back(ir::stage_graph(graph, stage.nodes));
    stage.schedule = {sub, "alpha-beta", 0, false, {}, {}};
    for (ir::Vertex v : graphs.back().topological_order()) {
      const ir::Node& node = graphs.back().node(v);
      stage.schedule.specs.push_back({node.name, replicated_text(node.type, sub_rank)});
      for (const ir::Param& p : node.params) stage.schedule.specs.push_back({node.name + "." + p.name, replicated_text(p.type, sub_rank)});
    }
  }
  for (std::size_t s = 0; s < staged.stages.size(); ++s) {
    const std::set<std::string> own(staged.stages[s].nodes.begin(), staged.stages[s].nodes.end());
    for (std::size_t from = 0; from < s; ++from) {
      for (const auto& name : staged.stages[from].nodes) {
        const auto v = graphs[s].find(name);
        if (v && !own.count(name)) {
          const ir::TensorType& type = graphs[s].node(*v).type;
          staged.transfers.push_back({name, static_cast<int>(from), static_cast<int>(s), replicated_text(type, sub_rank),
                                      ir::num_elements(type.shape) * 4, 0});
        }
      }
    }
  }
  return staged;
}

}  // namespace shardsynth::runtime::testing
