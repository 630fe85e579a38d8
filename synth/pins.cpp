#include "synth/pins.hpp"

#include "ir/spec.hpp"

namespace shardsynth::synth {

Pin parse_pin(std::string_view text) {
  const std::string whole(text);
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    throw ir::InputError("pin '" + whole + "': expected TENSOR=SPEC or TENSOR!=SPEC");
  }
  Pin pin;
  pin.kind = text[eq - 1] == '!' ? PinKind::forbid : PinKind::fix;
  pin.tensor = std::string(text.substr(0, pin.kind == PinKind::forbid ? eq - 1 : eq));
  pin.spec = std::string(text.substr(eq + 1));
  if (pin.tensor.empty()) throw ir::InputError("pin '" + whole + "': no tensor name before '='");
  return pin;
}

std::string to_string(const Pin& pin) {
  return pin.tensor + (pin.kind == PinKind::forbid ? "!=" : "=") + pin.spec;
}

namespace {

// Where a pinned tensor's spec is read from: the output of a graph node, or
// one parameter operand of an op node.
struct PinTarget {
  ir::Vertex vertex = 0;  // the graph node named (the output's node, or the parameter's owner)
  int param = -1;         // parameter index on that node; -1 = the node's output
};

PinTarget find_target(const Lowered& lowered, const Pin& pin) {
  const auto& graph = lowered.graph;
  if (auto v = graph.find(pin.tensor)) return {*v, -1};
  const auto dot = pin.tensor.rfind('.');
  if (dot != std::string::npos) {
    if (auto v = graph.find(pin.tensor.substr(0, dot))) {
      const auto& params = graph.node(*v).params;
      const std::string name = pin.tensor.substr(dot + 1);
      for (std::size_t p = 0; p < params.size(); ++p) {
        if (params[p].name == name) return {*v, static_cast<int>(p)};
      }
      throw ir::InputError("pin '" + to_string(pin) + "': node '" + graph.node(*v).name + "' has no parameter '" +
                           name + "'");
    }
  }
  throw ir::InputError("pin '" + to_string(pin) + "': no tensor named '" + pin.tensor + "' in the graph");
}

}  // namespace

std::vector<ResolvedPin> resolve_pins(const Lowered& lowered, const std::vector<Pin>& pins) {
  const int mesh_rank = lowered.mesh.rank();
  std::vector<ResolvedPin> out;
  for (const Pin& pin : pins) {
    const PinTarget target = find_target(lowered, pin);
    std::string want;
    try {
      want = ir::to_string(ir::parse_spec(pin.spec, mesh_rank), mesh_rank);
    } catch (const std::exception& e) {
      throw ir::InputError("pin '" + to_string(pin) + "': " + e.what());
    }
    if (pin.kind == PinKind::fix) {
      // Shards are even: a spec whose dims do not divide is no plan at all,
      // said here rather than as a pin that "cannot hold".
      const ir::Node& node = lowered.graph.node(target.vertex);
      const ir::TensorType& type = target.param >= 0 ? node.params[target.param].type : node.type;
      const ir::Spec spec = ir::parse_spec(want, mesh_rank);
      if (spec.rank() <= static_cast<int>(type.shape.size())) {
        try {
          ir::local_shape(type.shape, spec, lowered.mesh);
        } catch (const ir::InputError& e) {
          throw ir::InputError("pin '" + to_string(pin) + "': " + e.what() + " (shards are even)");
        }
      }
    }
    const int node = lowered.owner.at(target.vertex);
    const NodeLabel& label = lowered.nodes.at(node);
    if (target.param >= 0 && label.vertex != target.vertex) {
      throw ir::InputError("pin '" + to_string(pin) + "': the parameter's node makes no sharding choice of its own");
    }
    ResolvedPin resolved{node, {}};
    for (const StrategyInfo& s : label.strategies) {
      const ir::Spec* spec = &s.output;
      if (target.param >= 0) {
        const std::size_t params = lowered.graph.node(target.vertex).params.size();
        spec = &s.operands.at(s.operands.size() - params + static_cast<std::size_t>(target.param));
      }
      const std::string text = ir::to_string(*spec, mesh_rank);
      if (ir::parse_spec(text, mesh_rank).rank() != ir::parse_spec(want, mesh_rank).rank()) {
        throw ir::InputError("pin '" + to_string(pin) + "': specs of '" + pin.tensor + "' describe " +
                             std::to_string(spec->rank()) + " dims (e.g. " + text + "), '" + pin.spec + "' describes " +
                             std::to_string(ir::parse_spec(want, mesh_rank).rank()));
      }
      const bool same = text == want;
      resolved.allows.push_back(pin.kind == PinKind::fix ? same : !same);
    }
    out.push_back(std::move(resolved));
  }
  return out;
}

void apply_pins(Lowered& lowered, const std::vector<Pin>& pins) {
  if (pins.empty()) return;
  const auto resolved = resolve_pins(lowered, pins);
  const auto conflict = conflicting_pins(lowered.problem, resolved);
  if (!conflict.empty()) {
    std::vector<Pin> named;
    std::string list;
    for (int i : conflict) {
      named.push_back(pins[i]);
      list += (list.empty() ? "" : ", ") + to_string(pins[i]);
    }
    const std::string why = named.size() == 1 ? "pin " + list + " cannot hold: no plan satisfies it"
                                              : "pins conflict: " + list + " cannot hold together";
    const std::string count = " (" + std::to_string(named.size()) + " of " + std::to_string(pins.size()) + " pins)";
    throw PinConflictError(why + count, std::move(named));
  }
  for (const ResolvedPin& pin : resolved) {
    auto& costs = lowered.problem.nodes[pin.node].costs;
    for (std::size_t s = 0; s < costs.size(); ++s) {
      if (!pin.allows[s]) costs[s] = kForbidden;
    }
  }
}

}  // namespace shardsynth::synth
