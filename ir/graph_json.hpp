#pragma once
// The graph JSON format (docs/graph_json.md): a Graph as plain data, written by
// examples/export_fx.py from a torch.fx trace and read by `synth graph.json`.
// Every Node field round-trips: graph_to_json(graph_from_json(j)) == j for any
// j that graph_to_json wrote.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/graph.hpp"

namespace shardsynth::ir {

// The format version graph_to_json writes and graph_from_json reads.
inline constexpr int kGraphJsonVersion = 1;
// The op-table kind that unknown ops become under UnknownOps::replicate.
inline constexpr std::string_view kOpaque = "opaque";

// What to do with a node whose kind the op table lacks.
enum class UnknownOps {
  error,      // throw InputError naming the op kind and the node
  replicate,  // keep it as kind "opaque" (every factor replicated), original kind/target in Node::target
};

struct GraphJsonOptions {
  UnknownOps unknown_ops = UnknownOps::error;  // policy for kinds missing from the op table
  std::vector<std::string>* warnings = nullptr;  // where one line per replicated node goes; null = dropped
};

// Parses "error" or "replicate"; throws InputError naming any other value.
UnknownOps parse_unknown_ops(std::string_view text);

// Builds a graph from its JSON form. `where` (a file name) prefixes every
// message. Throws InputError with one line naming the node and field, e.g.
// "g.json: node 'fc1': field 'shape': expected a list of positive integers".
Graph graph_from_json(const nlohmann::json& j, const std::string& where, const GraphJsonOptions& options = {});

// The JSON form: {"format", "version", "nodes": [...]} with nodes in vertex
// (insertion) order and each node's inputs in operand order; empty optional
// fields are left out.
nlohmann::json graph_to_json(const Graph& graph);

// Reads and parses a graph JSON file; throws InputError naming the path when
// it cannot be read or is not JSON.
Graph load_graph_json(const std::string& path, const GraphJsonOptions& options = {});

}  // namespace shardsynth::ir
