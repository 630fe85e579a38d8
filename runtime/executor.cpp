#include "runtime/executor.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ir/error.hpp"
#include "ir/op_table.hpp"
#include "runtime/forward_pass.hpp"
#include "runtime/half.hpp"
#include "runtime/packing.hpp"
#include "runtime/reference.hpp"
#include "runtime/reshard.hpp"

namespace shardsynth::runtime {

void validate_schedule(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, const std::string& where) {
  if (schedule.mesh != mesh.shape) throw ir::InputError(where + ": its mesh differs from the run's");
  std::map<std::string, std::string> specs;
  for (const auto& t : schedule.specs) {
    if (!specs.emplace(t.tensor, t.spec).second) throw ir::InputError(where + ": tensor '" + t.tensor + "' has two specs");
  }
  std::set<std::string> tensors;
  std::set<std::string> params;  // "node.param" of every parameter
  auto check = [&](const std::string& tensor, const ir::TensorType& type) {
    tensors.insert(tensor);
    auto it = specs.find(tensor);
    if (it == specs.end()) throw ir::InputError(where + ": no spec for tensor '" + tensor + "'");
    try {
      const ir::Spec spec = ir::parse_spec(it->second, mesh.rank());
      if (spec.rank() > static_cast<int>(type.shape.size())) throw ir::InputError("spec has more dims than the tensor");
      ir::local_shape(type.shape, spec, mesh);
    } catch (const ir::InputError& e) {
      throw ir::InputError(where + ": tensor '" + tensor + "' " + ir::shape_string(type.shape) + ", spec '" + it->second +
                           "': " + e.what());
    }
    try {
      wire_lanes(type.dtype);  // an element type the runtime can send as priced
    } catch (const ir::InputError& e) {
      throw ir::InputError(where + ": tensor '" + tensor + "': " + e.what());
    }
  };
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    check(node.name, node.type);
    for (const ir::Param& p : node.params) {
      const std::string tensor = node.name + "." + p.name;
      check(tensor, p.type);
      params.insert(tensor);
      // A training plan's storage of the parameter, where it names one (ir::kStoredSuffix).
      for (const char* suffix : {ir::kStoredSuffix, ir::kGradSuffix, ir::kStateSuffix}) {
        if (specs.count(tensor + suffix)) check(tensor + suffix, p.type);
      }
    }
  }
  for (const auto& t : schedule.specs) {
    if (!tensors.count(t.tensor)) throw ir::InputError(where + ": spec for tensor '" + t.tensor + "', which the graph lacks");
  }
  // The memory figures' planned tensors: activations by node name, parameters, their storage parts and their
  // gathered copies by "node.param".
  for (const auto& t : schedule.memory ? schedule.memory->tensors : std::vector<ir::PlannedTensor>{}) {
    std::string name = t.name;
    for (const std::string suffix : {ir::kGradSuffix, ir::kStateSuffix, ir::kGatheredSuffix}) {
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        name.resize(name.size() - suffix.size());
      }
    }
    const bool known = t.category == ir::MemoryCategory::activation ? graph.find(name).has_value() : params.count(name) > 0;
    if (!known) throw ir::InputError(where + ": memory tensor '" + t.name + "', which the graph lacks");
  }
  for (std::size_t i = 0; i < schedule.directives.size(); ++i) {
    const auto& d = schedule.directives[i];
    const std::string at = where + ": directive " + std::to_string(i) + " on '" + d.node + "'";
    const auto v = graph.find(d.node);
    if (!v) throw ir::InputError(where + ": directive " + std::to_string(i) + " on unknown node '" + d.node + "'");
    if (d.kind != ir::DirectiveKind::sync) continue;
    const auto arrow = d.sync_op.find("->");
    if (arrow == std::string::npos) throw ir::InputError(at + ": sync '" + d.sync_op + "' is not FROM->TO");
    try {
      ir::parse_spec(d.sync_op.substr(0, arrow), mesh.rank());
      ir::parse_spec(d.sync_op.substr(arrow + 2), mesh.rank());
    } catch (const ir::InputError& e) {
      throw ir::InputError(at + ": sync '" + d.sync_op + "': " + e.what());
    }
    if (d.arg >= static_cast<int>(graph.inputs_of(*v).size())) {
      throw ir::InputError(at + ": arg " + std::to_string(d.arg) + " but the node has " +
                           std::to_string(graph.inputs_of(*v).size()) + " operands");
    }
  }
}

RunResult run_sharded(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, Communicator& comm,
                      uint64_t seed, const std::map<std::string, KernelFn>& kernels,
                      const std::map<std::string, Tensor>& params, const std::map<std::string, Tensor>& inputs,
                      const std::map<std::string, Tensor>& local_inputs) {
  validate_schedule(graph, mesh, schedule);
  const PlanSpecs plan = parse_plan(graph, mesh, schedule);
  PricedResharder resharder(mesh, comm);
  ForwardPass pass(graph, plan, resharder, kernels, {seed, &params, &inputs, &local_inputs, nullptr}, false);
  std::optional<MemoryLedger> ledger;
  // A training plan's figures price a training step: a forward run alone is not measured against them.
  if (schedule.memory && !schedule.memory->tensors.empty() && schedule.mode == "inference") {
    ledger.emplace(schedule.memory->tensors, step_names(graph, false), [&](const ir::PlannedTensor& t) {
      return planned_local_bytes(graph, mesh, plan, t);
    });
    pass.set_ledger(&*ledger);
  }
  pass.run();
  RunResult result;
  if (ledger) {
    ledger->finish();
    result.memory = ledger->measured();
  }
  result.sent = comm.bytes_sent();
  result.predicted = resharder.predicted();
  // Gather the output whole (outside the plan's byte count).
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    if (node.kind != ir::kOutput) continue;
    const ir::Spec& spec = plan.of(node.name);
    result.outputs[node.name] = pass.value(node.name);
    result.output = widened(reshard(pass.value(node.name), spec, ir::replicated(spec.rank()), mesh, comm, node.type.dtype));
  }
  return result;
}

}  // namespace shardsynth::runtime
