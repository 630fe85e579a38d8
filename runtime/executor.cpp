#include "runtime/executor.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "costs/alpha_beta_cost_model.hpp"
#include "ir/error.hpp"
#include "ir/op_table.hpp"
#include "runtime/init.hpp"
#include "runtime/packing.hpp"
#include "runtime/reference.hpp"
#include "runtime/reshard.hpp"

namespace shardsynth::runtime {
namespace {

// Global index of this rank's first element along each tensor dim under `spec`.
std::vector<int64_t> offsets(const std::vector<int64_t>& shape, const ir::Spec& spec, const ir::Mesh& mesh,
                             const std::vector<int>& coords) {
  std::vector<int64_t> out(shape.size(), 0);
  const auto local = ir::local_shape(shape, spec, mesh);
  const std::size_t first = shape.size() - spec.dims.size();
  for (std::size_t d = 0; d < spec.dims.size(); ++d) {
    int64_t index = 0;
    for (int axis : spec.dims[d]) index = index * mesh.shape[axis] + coords[axis];
    out[first + d] = spec.blocks_of(static_cast<int>(d)) == 1 ? index * local[first + d] : -1;
  }
  return out;
}

class Run {
 public:
  Run(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, Communicator& comm, uint64_t seed,
      const std::map<std::string, KernelFn>& kernels, const std::map<std::string, Tensor>& params,
      const std::map<std::string, Tensor>& inputs, const std::map<std::string, Tensor>& local_inputs)
      : graph_(graph), mesh_(mesh), comm_(comm), seed_(seed), kernels_(kernels), params_(params), inputs_(inputs),
        local_inputs_(local_inputs) {
    for (const auto& t : schedule.specs) specs_[t.tensor] = ir::parse_spec(t.spec, mesh.rank());
    for (const auto& d : schedule.directives) {
      if (d.kind != ir::DirectiveKind::sync) continue;
      if (!graph.find(d.node)) throw std::invalid_argument("schedule: sync on unknown node '" + d.node + "'");
      const auto arrow = d.sync_op.find("->");
      if (arrow == std::string::npos) throw std::invalid_argument("schedule: bad sync '" + d.sync_op + "'");
      auto pair = std::make_pair(ir::parse_spec(d.sync_op.substr(0, arrow), mesh.rank()),
                                 ir::parse_spec(d.sync_op.substr(arrow + 2), mesh.rank()));
      if (d.mode == "fwd_pre") {
        pre_[{d.node, d.arg < 0 ? 0 : d.arg}] = std::move(pair);
      } else {
        post_[d.node].push_back(std::move(pair));
      }
    }
  }

  RunResult run() {
    // How many operand uses each value still has: a value is dropped after
    // its last use, so a rank holds the live tensors only (output nodes stay).
    for (ir::Vertex v : graph_.topological_order()) uses_left_[graph_.node(v).name] = graph_.users_of(v).size();
    for (ir::Vertex v : graph_.topological_order()) {
      step(v);
      for (ir::Vertex u : graph_.inputs_of(v)) {
        const ir::Node& producer = graph_.node(u);
        if (--uses_left_[producer.name] == 0 && producer.kind != ir::kOutput) values_.erase(producer.name);
      }
    }
    RunResult result;
    result.sent = comm_.bytes_sent();
    result.predicted = predicted_;
    // Gather the output whole (outside the plan's byte count).
    for (ir::Vertex v : graph_.topological_order()) {
      const ir::Node& node = graph_.node(v);
      if (node.kind != ir::kOutput) continue;
      const ir::Spec& spec = spec_of(node.name);
      result.outputs[node.name] = values_.at(node.name);
      result.output = reshard(values_.at(node.name), spec, ir::replicated(spec.rank()), mesh_, comm_, node.type.dtype);
    }
    return result;
  }

 private:
  const ir::Spec& spec_of(const std::string& tensor) const {
    auto it = specs_.find(tensor);
    if (it == specs_.end()) throw std::invalid_argument("schedule: no spec for tensor '" + tensor + "'");
    return it->second;
  }

  Tensor move(const Tensor& local, const ir::TensorType& type, const ir::Spec& from, const ir::Spec& to) {
    if (from == to) return local;
    const auto plan = costs::plan_resharding(from, to, mesh_);
    if (!plan) throw std::invalid_argument("schedule: cannot reshard " + ir::to_string(from, mesh_.rank()) + " to " +
                                           ir::to_string(to, mesh_.rank()));
    ir::Spec current = from;
    for (const auto& s : *plan) {
      if (s.kind != costs::CollectiveKind::slice && mesh_.shape[s.mesh_axis] > 1) {
        predicted_[s.kind] += costs::ring_bytes_sent(s, type, current, mesh_);
      }
      current = costs::apply(s, current);
    }
    return reshard(local, from, to, mesh_, comm_, type.dtype);
  }

  void step(ir::Vertex v) {
    const ir::Node& node = graph_.node(v);
    const auto coords = comm_.coords();
    if (node.kind == ir::kPlaceholder) {
      if (const auto local = local_inputs_.find(node.name); local != local_inputs_.end()) {
        const auto want = ir::local_shape(node.type.shape, spec_of(node.name), mesh_);
        if (local->second.shape != want) {
          throw std::invalid_argument("input '" + node.name + "': the local shard has shape " +
                                      ir::shape_string(local->second.shape) + ", its spec needs " + ir::shape_string(want));
        }
        values_[node.name] = local->second;
        return;
      }
      const auto given = inputs_.find(node.name);
      const Tensor whole = given != inputs_.end() ? given->second : init_input(node, seed_, input_vocab_limit(graph_, v));
      if (whole.shape != node.type.shape) {
        throw std::invalid_argument("input '" + node.name + "' has shape " + ir::shape_string(whole.shape) + ", the graph needs " +
                                    ir::shape_string(node.type.shape));
      }
      values_[node.name] = local_shard(whole, spec_of(node.name), mesh_, coords);
      return;
    }
    // Operands, resharded by fwd_pre syncs (or, for the graph output, by the producer's fwd_post).
    std::vector<Tensor> inputs;
    std::vector<ir::Spec> input_specs;
    const auto producers = graph_.inputs_of(v);
    for (std::size_t i = 0; i < producers.size(); ++i) {
      const ir::Node& producer = graph_.node(producers[i]);
      ir::Spec spec = spec_of(producer.name);
      Tensor value = values_.at(producer.name);
      if (auto it = pre_.find({node.name, static_cast<int>(i)}); it != pre_.end()) {
        if (it->second.first != spec) throw std::invalid_argument("schedule: fwd_pre sync on '" + node.name + "' starts from the wrong spec");
        value = move(value, producer.type, spec, it->second.second);
        spec = it->second.second;
      } else if (node.kind == ir::kOutput) {
        for (const auto& [from, to] : post_[producer.name]) {
          if (from == spec) {
            value = move(value, producer.type, spec, to);
            spec = to;
          }
        }
      }
      inputs.push_back(std::move(value));
      input_specs.push_back(spec);
    }
    if (node.kind == ir::kOutput) {
      values_[node.name] = std::move(inputs.at(0));
      return;
    }
    // The spec the op computes in: the output spec, or the partial source of a resolving fwd_post.
    const ir::Spec& output = spec_of(node.name);
    ir::Spec result = output;
    for (const auto& [from, to] : post_[node.name]) {
      if (to == output && !from.partial.empty()) result = from;
    }
    std::vector<Tensor> params;
    params.reserve(node.params.size());
    std::vector<int64_t> weight_offsets;
    for (const ir::Param& p : node.params) {
      const std::string full = p.tied_to.empty() ? node.name + "." + p.name : p.tied_to;
      const ir::Spec& spec = spec_of(node.name + "." + p.name);
      const auto given = params_.find(full);
      const Tensor whole = given != params_.end() ? given->second : init_param(full, p.type.shape, seed_);
      if (whole.shape != p.type.shape) {
        throw std::invalid_argument("parameter '" + full + "' has shape " + ir::shape_string(whole.shape) + ", the graph needs " +
                                    ir::shape_string(p.type.shape));
      }
      params.push_back(local_shard(whole, spec, mesh_, coords));
      if (p.name == "weight") weight_offsets = offsets(p.type.shape, spec, mesh_, coords);
    }
    KernelCall call{node, {}, {}, ir::local_shape(node.type.shape, result, mesh_), {}, weight_offsets};
    for (const auto& t : inputs) call.inputs.push_back(&t);
    if (!producers.empty()) {
      call.in_offsets = offsets(graph_.node(producers[0]).type.shape, input_specs[0], mesh_, coords);
    }
    // A partial result is a sum over ranks: a parameter that is added rather
    // than contracted (no reduction factor: a bias) joins the sum once, on the
    // rank at coordinate 0 of every partial axis.
    if (!result.partial.empty()) {
      bool leader = true;
      for (int axis : result.partial) leader = leader && coords[axis] == 0;
      const ir::ShardingRule rule = ir::rule_for(graph_, v);
      const std::size_t first = rule.operands.size() - node.params.size();
      for (std::size_t p = 0; p < node.params.size() && !leader; ++p) {
        bool contracted = false;
        for (const auto& dim : rule.operands[first + p]) {
          for (int f : dim) contracted = contracted || rule.factors[f].kind == ir::FactorKind::reduction;
        }
        if (!contracted) std::fill(params[p].data.begin(), params[p].data.end(), 0.0f);
      }
    }
    for (std::size_t p = 0; p < node.params.size(); ++p) call.params[node.params[p].name] = &params[p];
    const auto kernel = kernels_.find(node.kind);
    if (kernel == kernels_.end()) throw std::invalid_argument("no kernel for node '" + node.name + "' (" + node.kind + ")");
    Tensor local = kernel->second(call);
    if (local.shape != call.out_shape) {
      throw std::invalid_argument("node '" + node.name + "': the local result has shape " + ir::shape_string(local.shape) +
                                  ", the schedule's spec needs " + ir::shape_string(call.out_shape));
    }
    values_[node.name] = result == output ? std::move(local) : move(local, node.type, result, output);
  }

  const ir::Graph& graph_;
  const ir::Mesh& mesh_;
  Communicator& comm_;
  uint64_t seed_;
  const std::map<std::string, KernelFn>& kernels_;   // op kind -> the backend's kernel
  const std::map<std::string, Tensor>& params_;      // whole parameters given by name
  const std::map<std::string, Tensor>& inputs_;      // whole inputs given by placeholder name
  const std::map<std::string, Tensor>& local_inputs_;  // local shards of inputs given by placeholder name
  std::map<std::string, ir::Spec> specs_;                                       // tensor name -> spec
  std::map<std::pair<std::string, int>, std::pair<ir::Spec, ir::Spec>> pre_;   // (node, arg) -> fwd_pre from, to
  std::map<std::string, std::vector<std::pair<ir::Spec, ir::Spec>>> post_;     // node -> fwd_post (from, to), in order
  std::map<std::string, Tensor> values_;                                        // node -> local value in its spec, while still used
  std::map<std::string, std::size_t> uses_left_;                                // node -> operand uses not yet run
  std::map<costs::CollectiveKind, int64_t> predicted_;                          // cost model ring bytes
};

}  // namespace

void validate_schedule(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, const std::string& where) {
  if (schedule.mesh != mesh.shape) throw ir::InputError(where + ": its mesh differs from the run's");
  std::map<std::string, std::string> specs;
  for (const auto& t : schedule.specs) {
    if (!specs.emplace(t.tensor, t.spec).second) throw ir::InputError(where + ": tensor '" + t.tensor + "' has two specs");
  }
  std::set<std::string> tensors;
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
    for (const ir::Param& p : node.params) check(node.name + "." + p.name, p.type);
  }
  for (const auto& t : schedule.specs) {
    if (!tensors.count(t.tensor)) throw ir::InputError(where + ": spec for tensor '" + t.tensor + "', which the graph lacks");
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
  return Run(graph, mesh, schedule, comm, seed, kernels, params, inputs, local_inputs).run();
}

}  // namespace shardsynth::runtime
