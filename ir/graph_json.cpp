#include "ir/graph_json.hpp"

#include <cmath>
#include <set>
#include <utility>

#include "ir/error.hpp"
#include "ir/json_field.hpp"
#include "ir/file_io.hpp"
#include "ir/op_table.hpp"

namespace shardsynth::ir {
namespace {

using nlohmann::json;

constexpr std::string_view kFormat = "shardsynth-graph";  // the "format" field's only value

// Builds one-line messages "where: node 'x': field 'f': what".
class Context {
 public:
  Context(std::string where, std::string node) : where_(std::move(where)), node_(std::move(node)) {}
  InputError fail(const std::string& field, const std::string& what) const {
    return InputError(where_ + ": " + node_ + (field.empty() ? "" : ": field '" + field + "'") + ": " + what);
  }
  const std::string& where() const { return where_; }
  const std::string& node() const { return node_; }

 private:
  std::string where_;  // file name
  std::string node_;   // "node 'x'" or "node #3"
};

std::string short_text(const json& value) {
  std::string text = value.dump();
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

const std::set<std::string>& node_fields() {
  static const std::set<std::string> fields{"name", "kind", "target", "shape", "dtype", "inputs", "params", "attrs",
                                            "real_attrs"};
  return fields;
}

std::string get_string(const json& object, const std::string& field, const Context& ctx, bool required,
                       bool nonempty = false) {
  auto it = object.find(field);
  if (it == object.end()) {
    if (required) throw ctx.fail(field, "missing");
    return "";
  }
  if (!it->is_string() || (nonempty && it->get_ref<const std::string&>().empty())) {
    throw ctx.fail(field, std::string("expected a") + (nonempty ? " non-empty" : "") + " string, got " + short_text(*it));
  }
  return it->get<std::string>();
}

std::vector<int64_t> get_shape(const json& object, const std::string& field, const Context& ctx) {
  auto it = object.find(field);
  if (it == object.end()) throw ctx.fail(field, "missing");
  const std::string expected = "expected a list of positive integers";
  if (!it->is_array()) throw ctx.fail(field, expected + ", got " + short_text(*it));
  std::vector<int64_t> shape;
  for (const json& d : *it) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1) throw ctx.fail(field, expected + ", got " + short_text(d));
    shape.push_back(d.get<int64_t>());
  }
  try {
    num_elements(shape);
  } catch (const InputError& e) {
    throw ctx.fail(field, e.what());
  }
  return shape;
}

DType get_dtype(const json& object, const std::string& field, const Context& ctx) {
  const std::string text = get_string(object, field, ctx, true, true);
  try {
    return parse_dtype(text);
  } catch (const InputError&) {
    throw ctx.fail(field, "unknown dtype '" + text + "' (known: float32, float16, bfloat16, int64)");
  }
}

std::vector<Param> get_params(const json& object, const Context& ctx) {
  std::vector<Param> params;
  auto it = object.find("params");
  if (it == object.end()) return params;
  if (!it->is_array()) throw ctx.fail("params", "expected a list of objects, got " + short_text(*it));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& p = (*it)[i];
    const std::string field = "params[" + std::to_string(i) + "]";
    if (!p.is_object()) throw ctx.fail(field, "expected an object, got " + short_text(p));
    for (const auto& [key, value] : p.items()) {
      if (key != "name" && key != "shape" && key != "dtype" && key != "tied_to") {
        throw ctx.fail(field + "." + key, "unknown field (known: dtype, name, shape, tied_to)");
      }
    }
    Param param;
    param.name = get_string(p, "name", ctx, true, true);
    const Context param_ctx(ctx.where(), ctx.node() + ": param '" + param.name + "'");
    param.type.shape = get_shape(p, "shape", param_ctx);
    param.type.dtype = get_dtype(p, "dtype", param_ctx);
    param.tied_to = get_string(p, "tied_to", param_ctx, false);
    if (!seen.insert(param.name).second) throw ctx.fail(field, "duplicate param name '" + param.name + "'");
    params.push_back(std::move(param));
  }
  return params;
}

std::map<std::string, std::vector<int64_t>> get_attrs(const json& object, const Context& ctx) {
  std::map<std::string, std::vector<int64_t>> attrs;
  auto it = object.find("attrs");
  if (it == object.end()) return attrs;
  if (!it->is_object()) throw ctx.fail("attrs", "expected an object of integer lists, got " + short_text(*it));
  for (const auto& [key, value] : it->items()) {
    const std::string field = "attrs." + key;
    if (!value.is_array()) throw ctx.fail(field, "expected a list of integers, got " + short_text(value));
    std::vector<int64_t> values;
    for (const json& v : value) {
      if (!v.is_number_integer()) throw ctx.fail(field, "expected a list of integers, got " + short_text(v));
      values.push_back(v.get<int64_t>());
    }
    attrs.emplace(key, std::move(values));
  }
  return attrs;
}

std::map<std::string, double> get_real_attrs(const json& object, const Context& ctx) {
  std::map<std::string, double> attrs;
  auto it = object.find("real_attrs");
  if (it == object.end()) return attrs;
  if (!it->is_object()) throw ctx.fail("real_attrs", "expected an object of numbers, got " + short_text(*it));
  for (const auto& [key, value] : it->items()) {
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
      throw ctx.fail("real_attrs." + key, "expected a finite number, got " + short_text(value));
    }
    attrs.emplace(key, value.get<double>());
  }
  return attrs;
}

std::vector<std::string> get_inputs(const json& object, const Context& ctx) {
  std::vector<std::string> inputs;
  auto it = object.find("inputs");
  if (it == object.end()) return inputs;
  if (!it->is_array()) throw ctx.fail("inputs", "expected a list of node names, got " + short_text(*it));
  for (const json& name : *it) {
    if (!name.is_string()) throw ctx.fail("inputs", "expected a list of node names, got " + short_text(name));
    inputs.push_back(name.get<std::string>());
  }
  return inputs;
}

// The node's kind after the unknown-op policy: a table kind or a boundary as
// given; otherwise an error, or "opaque" with the original kind and target
// kept in Node::target.
void resolve_kind(Node& node, const std::string& where, const GraphJsonOptions& options) {
  if (is_boundary(node.kind) || op_table().count(node.kind)) return;
  const std::string what = "unknown op kind '" + node.kind + "' at fx node '" + node.name + "'";
  if (options.unknown_ops == UnknownOps::error) {
    throw InputError(where + ": " + what + " (--unknown-ops=replicate keeps such nodes replicated)");
  }
  if (options.warnings) options.warnings->push_back(where + ": " + what + ": kept replicated as '" + std::string(kOpaque) + "'");
  node.target = node.target.empty() ? node.kind : node.kind + ": " + node.target;
  node.kind = std::string(kOpaque);
}

json shape_json(const std::vector<int64_t>& shape) {
  json list = json::array();
  for (int64_t d : shape) list.push_back(d);
  return list;
}

std::string bare_dtype(DType dtype) { return dtype_name(dtype).substr(6); }  // drops "torch."

}  // namespace

UnknownOps parse_unknown_ops(std::string_view text) {
  if (text == "error") return UnknownOps::error;
  if (text == "replicate") return UnknownOps::replicate;
  throw InputError("unknown --unknown-ops value '" + std::string(text) + "' (known: error, replicate)");
}

Graph graph_from_json(const json& j, const std::string& where, const GraphJsonOptions& options) {
  const Context top(where, "graph");
  if (!j.is_object()) throw InputError(where + ": expected a JSON object with \"format\", \"version\" and \"nodes\"");
  for (const auto& [key, value] : j.items()) {
    if (key != "format" && key != "version" && key != "nodes") {
      throw top.fail(key, "unknown field (known: format, nodes, version)");
    }
  }
  if (get_string(j, "format", top, true) != kFormat) {
    throw top.fail("format", "expected \"" + std::string(kFormat) + "\", got " + short_text(j.at("format")));
  }
  if (!j.contains("version")) throw top.fail("version", "missing");
  if (!j.at("version").is_number_integer() || j.at("version").get<int64_t>() != kGraphJsonVersion) {
    throw top.fail("version", "unsupported version " + short_text(j.at("version")) + " (this build reads " +
                                  std::to_string(kGraphJsonVersion) + ")");
  }
  if (!j.contains("nodes") || !j.at("nodes").is_array()) throw top.fail("nodes", "expected a list of nodes");

  Graph graph;
  std::vector<std::pair<Vertex, std::vector<std::string>>> wiring;  // node -> input names, connected once all exist
  const json& nodes = j.at("nodes");
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const json& n = nodes[i];
    const Context numbered(where, "node #" + std::to_string(i));
    if (!n.is_object()) throw numbered.fail("", "expected an object, got " + short_text(n));
    Node node;
    node.name = get_string(n, "name", numbered, true, true);
    const Context ctx(where, "node '" + node.name + "'");
    for (const auto& [key, value] : n.items()) {
      if (!node_fields().count(key)) {
        throw ctx.fail(key, "unknown field (known: attrs, dtype, inputs, kind, name, params, real_attrs, shape, target)");
      }
    }
    node.kind = get_string(n, "kind", ctx, true, true);
    node.target = get_string(n, "target", ctx, false);
    node.type.shape = get_shape(n, "shape", ctx);
    node.type.dtype = get_dtype(n, "dtype", ctx);
    node.params = get_params(n, ctx);
    node.attrs = get_attrs(n, ctx);
    node.real_attrs = get_real_attrs(n, ctx);
    std::vector<std::string> inputs = get_inputs(n, ctx);
    if (node.kind == kPlaceholder && !inputs.empty()) throw ctx.fail("inputs", "a placeholder has no inputs");
    resolve_kind(node, where, options);
    if (graph.find(node.name)) throw ctx.fail("name", "duplicate node name '" + node.name + "'");
    wiring.emplace_back(graph.add_isolated(std::move(node)), std::move(inputs));
  }
  for (const auto& [v, inputs] : wiring) {
    const Context ctx(where, "node '" + graph.node(v).name + "'");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto from = graph.find(inputs[i]);
      if (!from) throw ctx.fail("inputs", "unknown node '" + inputs[i] + "'");
      graph.connect(*from, v, static_cast<int>(i));
    }
  }
  std::set<std::string> param_names;
  for (std::size_t v = 0; v < graph.size(); ++v) {
    for (const Param& p : graph.node(v).params) param_names.insert(graph.node(v).name + "." + p.name);
  }
  for (std::size_t v = 0; v < graph.size(); ++v) {
    const Context ctx(where, "node '" + graph.node(v).name + "'");
    for (const Param& p : graph.node(v).params) {
      if (!p.tied_to.empty() && !param_names.count(p.tied_to)) {
        const Context param_ctx(where, ctx.node() + ": param '" + p.name + "'");
        throw param_ctx.fail("tied_to", "unknown parameter '" + p.tied_to + "'");
      }
    }
  }
  std::vector<Vertex> order;
  try {
    order = graph.topological_order();
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  // Shapes must agree between producers and consumers: an output node has its
  // operand's type, and every op's sharding equation instantiates (a factor
  // has one extent in every tensor it appears in).
  for (Vertex v : order) {
    const Node& node = graph.node(v);
    const Context ctx(where, "node '" + node.name + "'");
    const auto inputs = graph.inputs_of(v);
    if (node.kind == kOutput) {
      if (inputs.size() != 1) throw ctx.fail("inputs", "an output has exactly one input, got " + std::to_string(inputs.size()));
      const Node& from = graph.node(inputs.front());
      if (from.type.shape != node.type.shape) {
        throw ctx.fail("shape", shape_string(node.type.shape) + " differs from its input '" + from.name + "' " +
                                    shape_string(from.type.shape));
      }
      continue;
    }
    if (is_boundary(node.kind)) continue;
    try {
      rule_for(graph, v);
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    } catch (const std::exception&) {
      // An equation derived from shapes (view, permute, ...) indexes its
      // operands; too few of them used to escape as std::out_of_range
      // (found by fuzzing: a view with no inputs).
      throw ctx.fail("inputs", std::to_string(inputs.size()) + " inputs do not fit op kind '" + node.kind + "'");
    }
  }
  return graph;
}

json graph_to_json(const Graph& graph) {
  json nodes = json::array();
  for (std::size_t v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    json n;
    n["name"] = node.name;
    n["kind"] = node.kind;
    if (!node.target.empty()) n["target"] = node.target;
    n["shape"] = shape_json(node.type.shape);
    n["dtype"] = bare_dtype(node.type.dtype);
    json inputs = json::array();
    for (Vertex input : graph.inputs_of(v)) inputs.push_back(graph.node(input).name);
    n["inputs"] = std::move(inputs);
    if (!node.params.empty()) {
      json params = json::array();
      for (const Param& p : node.params) {
        json param{{"name", p.name}, {"shape", shape_json(p.type.shape)}, {"dtype", bare_dtype(p.type.dtype)}};
        if (!p.tied_to.empty()) param["tied_to"] = p.tied_to;
        params.push_back(std::move(param));
      }
      n["params"] = std::move(params);
    }
    if (!node.attrs.empty()) n["attrs"] = node.attrs;
    if (!node.real_attrs.empty()) n["real_attrs"] = node.real_attrs;
    nodes.push_back(std::move(n));
  }
  return json{{"format", kFormat}, {"version", kGraphJsonVersion}, {"nodes", std::move(nodes)}};
}

Graph load_graph_json(const std::string& path, const GraphJsonOptions& options) {
  const std::string text = read_file(path);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(path + ": not valid JSON (" + json_parse_failure(e) + ")");
  }
  return graph_from_json(j, path, options);
}

}  // namespace shardsynth::ir
