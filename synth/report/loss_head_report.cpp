#include "synth/report/loss_head_report.hpp"

#include <cstdio>

#include "costs/op_cost.hpp"
#include "ir/op_table.hpp"

namespace shardsynth::synth {

std::string loss_head_text(const Lowered& lowered, const Assignment& assignment) {
  std::string text;
  const ir::Graph& graph = lowered.graph;
  for (ir::Vertex v : lowered.order) {
    const ir::Node& node = graph.node(v);
    if (ir::is_boundary(node.kind) || ir::op_info(node.kind, node.name).normalized.empty()) continue;
    const int owner = lowered.owner[v];
    const auto inputs = graph.inputs_of(v);
    if (owner < 0 || inputs.empty()) continue;
    const ir::Spec& read = lowered.nodes[owner].strategies[assignment[owner]].operands.at(0);
    const ir::Node& logits = graph.node(inputs[0]);
    const double local = static_cast<double>(costs::activation_bytes(logits.type, read, lowered.mesh));
    const double whole =
        static_cast<double>(costs::activation_bytes(logits.type, ir::replicated(read.rank()), lowered.mesh));
    char bytes[96];
    std::snprintf(bytes, sizeof bytes, ", %.2f GB per device (whole: %.2f GB)\n", local / 1e9, whole / 1e9);
    text += "loss head '" + node.name + "' (" + node.kind + "): reads '" + logits.name + "' " +
            ir::shape_string(logits.type.shape) + " as " + ir::to_string(read, lowered.mesh.rank()) + bytes;
  }
  return text;
}

}  // namespace shardsynth::synth
