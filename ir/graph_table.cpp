#include "ir/graph_table.hpp"

#include "ir/op_table.hpp"
#include "ir/text_table.hpp"

namespace shardsynth::ir {

std::string format_graph_table(const Graph& graph) {
  std::vector<std::vector<std::string>> rows;
  for (Vertex v : graph.topological_order()) {
    const Node& node = graph.node(v);
    rows.push_back({node.name, fx_op_of(node), fx_target_of(node), shape_string(node.type.shape), dtype_name(node.type.dtype)});
    for (const Param& p : node.params) {
      rows.push_back({"|-" + p.name, "", "", shape_string(p.type.shape), dtype_name(p.type.dtype)});
    }
  }
  return format_table({"name", "op", "target", "shape", "dtype"}, rows);
}

}  // namespace shardsynth::ir
