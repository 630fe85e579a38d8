// The segments activation recomputation works in (ir/recompute_segments.hpp).
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "ir/gpt2.hpp"
#include "ir/graph.hpp"
#include "ir/models.hpp"
#include "ir/recompute_segments.hpp"
#include "tiny_gpt2.hpp"

namespace shardsynth::ir {
namespace {

std::string layer_of(const std::string& name) {
  if (name.rfind("h.", 0) != 0) return "";
  return name.substr(0, name.find('.', 2));
}

}  // namespace

TEST_CASE("recompute_segments_Gpt2HasOneLayerPerSegment") {
  const Graph graph = testing::tiny_gpt2(4);
  const auto order = graph.topological_order();
  const RecomputeSegments segments = recompute_segments(graph, order);
  std::map<std::string, std::set<int>> by_layer;
  for (Vertex v : order) by_layer[layer_of(graph.node(v).name)].insert(segments.segment[v]);
  std::set<int> seen;
  for (int l = 0; l < 4; ++l) {
    const std::string layer = "h." + std::to_string(l);
    CAPTURE(layer);
    REQUIRE(by_layer[layer].size() == 1);  // a layer is never split
    CHECK(seen.insert(*by_layer[layer].begin()).second);  // nor shares its segment with another
  }
  for (Vertex v : order) {
    const std::string name = graph.node(v).name;
    CAPTURE(name);
    // The residual stream between layers is read across the cut: kept. Inside a layer everything may go.
    const bool layer_output = name.size() > 10 && name.substr(name.size() - 10) == "residual_2";
    if (layer_of(name).empty()) continue;
    CHECK(may_recompute(graph, segments, v) == !layer_output);
  }
}

TEST_CASE("recompute_segments_MlpChainsGroupAboutSqrtPieces") {
  // A chain of identical ops repeats one by one: segments of about sqrt(pieces) nodes.
  Graph graph;
  graph.add_node(placeholder("x", {{8, 16}, DType::float32}), {});
  std::string last = "x";
  for (int i = 0; i < 16; ++i) {
    Node relu;
    relu.name = "relu" + std::to_string(i);
    relu.kind = "relu";
    relu.type = {{8, 16}, DType::float32};
    graph.add_node(relu, {last});
    last = relu.name;
  }
  const auto order = graph.topological_order();
  const RecomputeSegments segments = recompute_segments(graph, order);
  CHECK(segments.segment_end.size() == 4);  // 16 pieces in 4 segments of 4 (the input joins the first)
  int recomputable = 0;
  for (Vertex v : order) recomputable += may_recompute(graph, segments, v);
  CHECK(recomputable == 13);  // all but the first three segments' last outputs, read across a cut
}

}  // namespace shardsynth::ir
