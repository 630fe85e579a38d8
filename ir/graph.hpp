#pragma once
// The model graph: ops as vertices of a Boost.Graph bidirectional
// adjacency_list, tensors flowing along edges. Each vertex produces one tensor
// (its output); an edge carries that tensor to one operand slot of a user.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "ir/tensor.hpp"

namespace shardsynth::ir {

// A named parameter of a module, e.g. fc1's "weight".
struct Param {
  std::string name;  // attribute name on the module ("weight", "bias")
  TensorType type;   // stored layout: nn.Linear's weight is [out, in]
  std::string tied_to;  // full name of the parameter this one shares storage with ("wte.weight"); empty = its own
};

struct Node {
  std::string name;              // unique node name; the key of sch["..."]
  std::string kind;              // op kind, the key of the op table ("linear", "gelu", "placeholder", "output")
  std::string target;            // fx-style target text for the graph table; empty = the op table's default
  TensorType type;               // the tensor this node produces
  std::vector<Param> params;     // parameters, in the op table's order
  std::map<std::string, std::vector<int64_t>> attrs;  // integer-list attributes, e.g. permute's "dims"
  std::map<std::string, double> real_attrs;           // real-valued attributes, e.g. a scale's "divisor"
};

struct Operand {
  int index = 0;  // operand position at the user: 0 is the first tensor input
};

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Node, Operand>;
using Vertex = BoostGraph::vertex_descriptor;

class Graph {
 public:
  // Adds a node whose inputs are existing nodes, by name, in operand order.
  // Throws InputError on a duplicate name or an unknown input.
  Vertex add_node(Node node, const std::vector<std::string>& inputs = {});
  // Adds a node with no edges; connect it later with connect().
  Vertex add_isolated(Node node);
  // Feeds the output of `from` to operand `index` of `to`.
  void connect(Vertex from, Vertex to, int index);

  std::size_t size() const { return boost::num_vertices(graph_); }
  const Node& node(Vertex v) const { return graph_[v]; }
  Node& node(Vertex v) { return graph_[v]; }
  std::optional<Vertex> find(const std::string& name) const;
  // Producers of v's tensor operands, in operand order. Throws InputError
  // when an operand slot is missing or filled twice.
  std::vector<Vertex> inputs_of(Vertex v) const;
  // (user, operand index) for every use of v's output, ordered by user then index.
  std::vector<std::pair<Vertex, int>> users_of(Vertex v) const;
  // Vertices in dependency order (Boost's topological_sort; the same graph
  // built in the same order always gives the same order). Throws InputError
  // naming a node on a cycle.
  std::vector<Vertex> topological_order() const;

  const BoostGraph& boost_graph() const { return graph_; }

 private:
  BoostGraph graph_;                        // the adjacency list
  std::map<std::string, Vertex> by_name_;   // node name -> vertex
};

}  // namespace shardsynth::ir
