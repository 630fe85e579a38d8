#include "ir/graph.hpp"

#include <algorithm>
#include <iterator>

#include <boost/graph/depth_first_search.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/graph/topological_sort.hpp>

#include "ir/error.hpp"

namespace shardsynth::ir {
namespace {

// Stops the search at the first back edge and remembers where it points.
struct CycleFinder : boost::default_dfs_visitor {
  std::optional<Vertex>* found;  // set to a vertex on the cycle
  explicit CycleFinder(std::optional<Vertex>* out) : found(out) {}
  template <class Edge, class G>
  void back_edge(Edge e, const G& g) {
    if (!*found) *found = boost::target(e, g);
  }
};

}  // namespace

Vertex Graph::add_isolated(Node node) {
  if (node.name.empty()) throw InputError("a node has an empty name");
  if (by_name_.count(node.name)) throw InputError("duplicate node name '" + node.name + "'");
  std::string name = node.name;
  Vertex v = boost::add_vertex(std::move(node), graph_);
  by_name_.emplace(std::move(name), v);
  return v;
}

Vertex Graph::add_node(Node node, const std::vector<std::string>& inputs) {
  std::vector<Vertex> producers;
  for (const auto& input : inputs) {
    auto found = find(input);
    if (!found) throw InputError("node '" + node.name + "' reads unknown node '" + input + "'");
    producers.push_back(*found);
  }
  Vertex v = add_isolated(std::move(node));
  for (std::size_t i = 0; i < producers.size(); ++i) connect(producers[i], v, static_cast<int>(i));
  return v;
}

void Graph::connect(Vertex from, Vertex to, int index) { boost::add_edge(from, to, Operand{index}, graph_); }

std::optional<Vertex> Graph::find(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<Vertex> Graph::inputs_of(Vertex v) const {
  std::vector<std::optional<Vertex>> slots;
  for (auto [it, end] = boost::in_edges(v, graph_); it != end; ++it) {
    int index = graph_[*it].index;
    if (index < 0) throw InputError("node '" + graph_[v].name + "' has a negative operand index");
    if (static_cast<std::size_t>(index) >= slots.size()) slots.resize(index + 1);
    if (slots[index]) {
      throw InputError("operand " + std::to_string(index) + " of node '" + graph_[v].name + "' is fed twice");
    }
    slots[index] = boost::source(*it, graph_);
  }
  std::vector<Vertex> producers;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i]) throw InputError("operand " + std::to_string(i) + " of node '" + graph_[v].name + "' is missing");
    producers.push_back(*slots[i]);
  }
  return producers;
}

std::vector<std::pair<Vertex, int>> Graph::users_of(Vertex v) const {
  std::vector<std::pair<Vertex, int>> users;
  for (auto [it, end] = boost::out_edges(v, graph_); it != end; ++it) {
    users.emplace_back(boost::target(*it, graph_), graph_[*it].index);
  }
  std::sort(users.begin(), users.end());
  return users;
}

std::vector<Vertex> Graph::topological_order() const {
  std::optional<Vertex> on_cycle;
  boost::depth_first_search(graph_, boost::visitor(CycleFinder(&on_cycle)));
  if (on_cycle) throw InputError("the graph has a cycle through node '" + graph_[*on_cycle].name + "'");
  // Sorting the reversed graph finishes every vertex after its producers, and
  // the search starts from vertices in insertion order, so independent
  // branches keep the order they were built in.
  std::vector<Vertex> order;
  const auto reversed = boost::make_reverse_graph(graph_);
  boost::topological_sort(reversed, std::back_inserter(order));
  return order;
}

}  // namespace shardsynth::ir
