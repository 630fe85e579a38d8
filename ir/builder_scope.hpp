#pragma once
// What the built-in transformer builders (gpt2.cpp, llama.cpp) share: adding
// nodes under one module path prefix, so node names are the model's module
// paths ("h.3.attn.c_attn", "model.layers.3.self_attn.q_proj").
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.hpp"

namespace shardsynth::ir {

class BuilderScope {
 public:
  using Shape = std::vector<int64_t>;
  using IntAttrs = std::map<std::string, std::vector<int64_t>>;
  using RealAttrs = std::map<std::string, double>;

  BuilderScope(Graph& graph, std::string prefix, DType dtype)
      : graph_(graph), prefix_(std::move(prefix)), dtype_(dtype) {}

  // Adds node prefix + `name` fed by `inputs` (full node names); returns its full name.
  std::string op(const std::string& name, const std::string& kind, Shape shape, const std::vector<std::string>& inputs,
                 std::vector<Param> params = {}, IntAttrs attrs = {}, RealAttrs real_attrs = {}) {
    Node node{prefix_ + name, kind, "", {std::move(shape), dtype_}, std::move(params), std::move(attrs),
              std::move(real_attrs)};
    graph_.add_node(std::move(node), inputs);
    return prefix_ + name;
  }

  // A parameter of this scope's element type that shares storage with no other.
  Param param(const std::string& name, Shape shape) const { return Param{name, {std::move(shape), dtype_}, ""}; }

 private:
  Graph& graph_;        // the graph being built
  std::string prefix_;  // module path prepended to every node name
  DType dtype_;         // element type of activations and params
};

}  // namespace shardsynth::ir
