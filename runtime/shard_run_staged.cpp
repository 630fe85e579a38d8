#include "runtime/shard_run_staged.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <utility>

#include "costs/alpha_beta_cost_model.hpp"
#include "ir/error.hpp"
#include "ir/mesh.hpp"
#include "ir/op_table.hpp"
#include "ir/spec.hpp"
#include "runtime/backend.hpp"
#include "runtime/executor.hpp"
#include "runtime/init.hpp"
#include "runtime/packing.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/reshard.hpp"
#include "runtime/stage_communicator.hpp"

namespace shardsynth::runtime {
namespace {

using costs::CollectiveKind;

constexpr int64_t kFloatBytes = sizeof(float);  // Tensor holds fp32


// The spec text `schedule` gives `tensor`, or empty.
std::string spec_text(const ir::Schedule& schedule, const std::string& tensor) {
  for (const auto& t : schedule.specs) {
    if (t.tensor == tensor) return t.spec;
  }
  return "";
}

bool is_send(const std::string& name) { return name.ends_with(ir::kSendSuffix); }

// The cost model's ring bytes of resharding a `type` tensor from `from` to `to`, added to `predicted`.
void predict(const ir::TensorType& type, const ir::Spec& from, const ir::Spec& to, const ir::Mesh& mesh,
             std::map<CollectiveKind, int64_t>& predicted) {
  if (from == to) return;
  const auto plan = costs::plan_resharding(from, to, mesh);
  if (!plan) throw std::invalid_argument("cannot reshard " + ir::to_string(from, mesh.rank()) + " to " + ir::to_string(to, mesh.rank()));
  ir::Spec current = from;
  for (const auto& s : *plan) {
    if (s.kind != CollectiveKind::slice && mesh.shape[s.mesh_axis] > 1) {
      predicted[s.kind] += costs::ring_bytes_sent(s, type, current, mesh);
    }
    current = costs::apply(s, current);
  }
}

void add(std::map<CollectiveKind, int64_t>& into, const std::map<CollectiveKind, int64_t>& more) {
  for (const auto& [kind, bytes] : more) into[kind] += bytes;
}

int64_t total(const std::map<CollectiveKind, int64_t>& bytes) {
  int64_t sum = 0;
  for (const auto& [kind, b] : bytes) sum += b;
  return sum;
}

// The stages' graphs, in stage order.
std::vector<ir::Graph> stage_graphs(const ir::Graph& graph, const ir::StagedSchedule& staged) {
  std::vector<ir::Graph> out;
  for (const auto& st : staged.stages) out.push_back(ir::stage_graph(graph, st.nodes));
  return out;
}


}  // namespace

ir::Mesh stage_group_mesh(const std::vector<int64_t>& mesh) {
  std::string text;
  for (int64_t e : stage_sub_mesh(mesh)) text += (text.empty() ? "" : "x") + std::to_string(e);
  return ir::parse_mesh(text);
}

std::vector<std::string> stage_model_outputs(const ir::Graph& stage_graph) {
  std::vector<std::string> out;
  for (ir::Vertex v : stage_graph.topological_order()) {
    const ir::Node& node = stage_graph.node(v);
    if (node.kind == ir::kOutput && !is_send(node.name)) out.push_back(node.name);
  }
  return out;
}

void validate_staged_schedule(const ir::Graph& graph, const ir::StagedSchedule& staged) {
  const ir::Mesh sub = stage_group_mesh(staged.mesh);
  std::map<std::string, int> stage_of;  // node -> the stage that runs it
  for (const auto& st : staged.stages) {
    for (const auto& name : st.nodes) {
      if (!stage_of.emplace(name, st.index).second) {
        throw ir::InputError("staged schedule: node '" + name + "' is in stage " + std::to_string(stage_of[name]) +
                             " and in stage " + std::to_string(st.index));
      }
    }
  }
  for (ir::Vertex v : graph.topological_order()) {
    if (!stage_of.count(graph.node(v).name)) throw ir::InputError("staged schedule: node '" + graph.node(v).name + "' is in no stage");
  }
  const std::vector<ir::Graph> graphs = stage_graphs(graph, staged);
  for (const auto& st : staged.stages) {
    try {
      validate_schedule(graphs[st.index], sub, st.schedule);
    } catch (const ir::InputError& e) {
      throw ir::InputError("staged schedule: stage " + std::to_string(st.index) + ": " + e.what());
    }
  }
  std::set<std::pair<std::string, int>> brought;  // (tensor, to_stage)
  for (const auto& t : staged.transfers) {
    const std::string where = "staged schedule: transfer of '" + t.tensor + "' from stage " + std::to_string(t.from_stage) +
                              " to stage " + std::to_string(t.to_stage);
    if (!brought.emplace(t.tensor, t.to_stage).second) throw ir::InputError(where + " appears twice");
    const auto producer = stage_of.find(t.tensor);
    if (producer == stage_of.end() || producer->second != t.from_stage) {
      throw ir::InputError(where + ": stage " + std::to_string(t.from_stage) + " does not compute it");
    }
    const ir::Graph& to_graph = graphs[t.to_stage];
    const auto placeholder = to_graph.find(t.tensor);
    if (!placeholder || to_graph.node(*placeholder).kind != ir::kPlaceholder || stage_of[t.tensor] == t.to_stage) {
      throw ir::InputError(where + ": stage " + std::to_string(t.to_stage) + " does not read it");
    }
    const std::string send_spec = spec_text(staged.stages[t.from_stage].schedule, t.tensor + ir::kSendSuffix);
    const ir::Spec from = ir::parse_spec(t.spec, sub.rank());
    if (ir::parse_spec(send_spec, sub.rank()) != from) {
      throw ir::InputError(where + ": its spec " + t.spec + " differs from the sender's spec " + send_spec + " of '" +
                           t.tensor + ir::kSendSuffix + "'");
    }
    const ir::Spec to = ir::parse_spec(spec_text(staged.stages[t.to_stage].schedule, t.tensor), sub.rank());
    if (!to.partial.empty()) throw ir::InputError(where + ": the receiver's spec " + ir::to_string(to, sub.rank()) + " is a partial sum");
    if (from != to && !costs::plan_resharding(from, to, sub)) {
      throw ir::InputError(where + ": the receiver's spec " + ir::to_string(to, sub.rank()) + " is unreachable from " + t.spec);
    }
  }
  // A missing transfer is named by the stage that needs it; a reader ahead of
  // its producer has none either (transfers only go forward).
  for (const auto& st : staged.stages) {
    const ir::Graph& g = graphs[st.index];
    for (ir::Vertex v : g.topological_order()) {
      const ir::Node& node = g.node(v);
      if (node.kind == ir::kPlaceholder && stage_of[node.name] != st.index && !brought.count({node.name, st.index})) {
        throw ir::InputError("staged schedule: stage " + std::to_string(st.index) + " reads '" + node.name +
                             "' but no transfer brings it");
      }
    }
  }
  // Every "<tensor>:send" output then has a transfer too: its readers are in
  // later stages (transfers only go forward) and each needs one.
}

std::map<std::string, Tensor> micro_batch_inputs(const ir::Graph& graph, uint64_t seed, int micro_batch) {
  std::map<std::string, Tensor> inputs;
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    if (node.kind != ir::kPlaceholder) continue;
    inputs[node.name] = init_input(node, seed + static_cast<uint64_t>(micro_batch), input_vocab_limit(graph, v));
  }
  return inputs;
}

StagedRunResult run_staged(const ir::Graph& graph, const ir::StagedSchedule& staged, Communicator& comm,
                           const StagedRunOptions& options, const std::map<std::string, KernelFn>& kernels,
                           const std::map<std::string, Tensor>& params, const OutputSink& sink) {
  if (options.micro_batches < 1) throw std::invalid_argument("micro-batches " + std::to_string(options.micro_batches));
  const StageLayout layout = stage_layout(staged.mesh);
  const ir::Mesh sub = stage_group_mesh(staged.mesh);
  const int me = comm.rank();
  StagedRunResult result;
  result.stage = stage_of_rank(layout, me);
  result.outputs.resize(options.micro_batches);
  const ir::Stage& stage = staged.stages.at(result.stage);
  const ir::Graph graph_of_stage = ir::stage_graph(graph, stage.nodes);
  const std::set<std::string> own(stage.nodes.begin(), stage.nodes.end());
  const std::vector<std::string> outputs = stage_model_outputs(graph_of_stage);
  std::string last_output;  // the output node run_sharded gathers whole (the last in graph order)
  for (ir::Vertex v : graph_of_stage.topological_order()) {
    if (graph_of_stage.node(v).kind == ir::kOutput) last_output = graph_of_stage.node(v).name;
  }
  const bool leader = me % layout.group_size == 0;  // member 0 of its group keeps the outputs

  std::vector<std::map<std::string, Tensor>> received(options.micro_batches);  // per micro-batch: placeholder -> local shard
  std::map<std::string, Tensor> computed;  // the current micro-batch's output nodes: local shards
  for (const PipelineStep& step : stage_steps(staged.transfers, result.stage, options.micro_batches)) {
    if (step.kind == StepKind::receive) {
      const ir::StageTransfer& t = staged.transfers.at(step.transfer);
      const ir::Spec spec = ir::parse_spec(spec_text(stage.schedule, t.tensor), sub.rank());
      const auto& type = graph_of_stage.node(*graph_of_stage.find(t.tensor)).type;
      // The shard arrives in its wire form (runtime/packing.hpp): int64 ids as 8-byte elements.
      std::vector<int64_t> wire_shape = ir::local_shape(type.shape, spec, sub);
      if (wire_lanes(type.dtype) > 1) wire_shape.push_back(wire_lanes(type.dtype));
      received[step.micro_batch][t.tensor] = from_wire(comm.recv(wire_shape, peer_rank(layout, me, t.from_stage)), type.dtype);
    } else if (step.kind == StepKind::compute) {
      std::map<std::string, Tensor> inputs;
      for (auto& [name, value] : micro_batch_inputs(graph, options.seed, step.micro_batch)) {
        if (own.count(name)) inputs.emplace(name, std::move(value));
      }
      StageCommunicator group(comm);
      RunResult run = run_sharded(graph_of_stage, sub, stage.schedule, group, options.seed, kernels, params, inputs,
                                  received[step.micro_batch]);
      received[step.micro_batch].clear();
      add(result.sent, run.sent);
      add(result.predicted, run.predicted);
      computed = std::move(run.outputs);
      if (!options.keep_outputs && !sink) continue;
      std::map<std::string, Tensor> wholes;  // this micro-batch's model outputs, on member 0
      for (const auto& name : outputs) {
        // run_sharded already gathered the stage graph's last output whole;
        // any other model output is gathered here (outside the plan's bytes, as that one).
        Tensor whole;
        if (name == last_output) {
          whole = std::move(run.output);
        } else {
          StageCommunicator gather(comm);
          const ir::Spec spec = ir::parse_spec(spec_text(stage.schedule, name), sub.rank());
          whole = reshard(computed.at(name), spec, ir::replicated(spec.rank()), sub, gather);
        }
        if (leader) wholes[name] = std::move(whole);
      }
      if (!leader || outputs.empty()) continue;
      if (sink) {
        sink(step.micro_batch, std::move(wholes));
      } else {
        result.outputs[step.micro_batch] = std::move(wholes);
      }
    } else {
      const ir::StageTransfer& t = staged.transfers.at(step.transfer);
      const ir::Spec from = ir::parse_spec(t.spec, sub.rank());
      const ir::Spec to = ir::parse_spec(spec_text(staged.stages.at(t.to_stage).schedule, t.tensor), sub.rank());
      const auto& type = graph.node(*graph.find(t.tensor)).type;
      StageCommunicator group(comm);
      const Tensor shard = to_wire(reshard(computed.at(t.tensor + ir::kSendSuffix), from, to, sub, group, type.dtype), type.dtype);
      add(result.sent, group.bytes_sent());
      predict(type, from, to, sub, result.predicted);
      comm.send(shard, peer_rank(layout, me, t.to_stage));
      result.p2p_sent += shard.numel() * kFloatBytes;  // the wire form: the model's element size
      result.p2p_scheduled += t.bytes;
    }
  }
  return result;
}

namespace {

// Per-stage figures rank 0 prints, in this order: collectives sent and
// predicted in total, p2p sent and scheduled, then sent and predicted per
// kind. fp32 holds integers exactly only below 2^24, so each figure travels
// as two elements (v / 2^20 and v % 2^20; exact below 2^44 bytes).
constexpr int64_t kSplit = int64_t{1} << 20;

std::vector<int64_t> figures_of(const StagedRunResult& r) {
  std::vector<int64_t> f = {total(r.sent), total(r.predicted), r.p2p_sent, r.p2p_scheduled};
  for (CollectiveKind kind : costs::kCommunicatingKinds) {
    f.push_back(r.sent.count(kind) ? r.sent.at(kind) : 0);
    f.push_back(r.predicted.count(kind) ? r.predicted.at(kind) : 0);
  }
  return f;
}

}  // namespace

Tensor encode_figures(const std::vector<int64_t>& figures) {
  Tensor t = zeros({2 * static_cast<int64_t>(figures.size())});
  for (std::size_t i = 0; i < figures.size(); ++i) {
    t.data[2 * i] = static_cast<float>(figures[i] / kSplit);
    t.data[2 * i + 1] = static_cast<float>(figures[i] % kSplit);
  }
  return t;
}

std::vector<int64_t> decode_figures(const Tensor& t) {
  std::vector<int64_t> f(t.data.size() / 2);
  for (std::size_t i = 0; i < f.size(); ++i) {
    f[i] = static_cast<int64_t>(t.data[2 * i]) * kSplit + static_cast<int64_t>(t.data[2 * i + 1]);
  }
  return f;
}

int run_staged_command(const ir::Graph& graph, const ir::StagedSchedule& staged, const StagedCommand& command) {
  if (command.run.micro_batches < 1) {
    throw ir::InputError("--micro-batches " + std::to_string(command.run.micro_batches) + ": must be at least 1");
  }
  validate_staged_schedule(graph, staged);
  const StageLayout layout = stage_layout(staged.mesh);
  const std::vector<ir::Graph> graphs = stage_graphs(graph, staged);
  Backend backend = make_backend(command.backend, staged.mesh);
  Communicator& comm = *backend.comm;
  const int me = comm.rank();
  const int micro_batches = command.run.micro_batches;

  // --check: member 0 of a stage with model outputs compares each
  // micro-batch's outputs with the unsharded model as soon as it has them
  // (so it holds one micro-batch's outputs at a time) and keeps the error
  // figures; after the pipeline, rank 0 collects them (and every group's byte
  // figures), then prints. Nothing is collected while the pipeline runs, so
  // collecting cannot block it.
  const std::vector<std::string> unsorted_names = stage_model_outputs(graphs[stage_of_rank(layout, me)]);
  const std::set<std::string> sorted_names(unsorted_names.begin(), unsorted_names.end());
  const std::vector<std::string> names_of_stage(sorted_names.begin(), sorted_names.end());  // this stage's model outputs, by name
  const int64_t kFigures = 4;  // per micro-batch and output: shapes agree (1/0), max abs error, max rel error, within tolerance (1/0)
  Tensor checked = zeros({static_cast<int64_t>(micro_batches) * static_cast<int64_t>(names_of_stage.size()) * kFigures});
  OutputSink sink = nullptr;
  if (command.check) {
    sink = [&](int m, std::map<std::string, Tensor> outputs) {
      const auto reference =
          run_reference_outputs(graph, command.run.seed, micro_batch_inputs(graph, command.run.seed, m), command.params);
      for (std::size_t i = 0; i < names_of_stage.size(); ++i) {
        const Tensor& expected = reference.at(names_of_stage[i]);
        const Tensor& got = outputs.at(names_of_stage[i]);
        float* f = &checked.data[(static_cast<std::size_t>(m) * names_of_stage.size() + i) * kFigures];
        const OutputComparison c = compare_output(expected, got);
        f[0] = c.same_shape ? 1.0f : 0.0f;
        f[3] = c.ok ? 1.0f : 0.0f;
        f[1] = static_cast<float>(c.max_abs);
        f[2] = static_cast<float>(c.max_rel);
      }
    };
  }
  StagedRunResult result;
  try {
    StagedRunOptions options = command.run;
    options.keep_outputs = false;  // only the sink (--check) sees outputs
    result = run_staged(graph, staged, comm, options, *backend.kernels, command.params, sink);
  } catch (const std::exception& e) {
    comm.abort(e.what());
  }

  int status = 0;
  std::vector<std::string> lines;  // rank 0: the check lines, printed after the table
  std::vector<std::vector<int64_t>> stats(layout.stages);
  try {
    const bool leader = me % layout.group_size == 0;
    if (me == 0) {
      for (int s = 0; s < layout.stages && command.check; ++s) {
        const std::vector<std::string> unsorted = stage_model_outputs(graphs[s]);
        const std::set<std::string> names(unsorted.begin(), unsorted.end());
        if (names.empty()) continue;
        const Tensor figures = s == 0 ? checked
                                      : comm.recv({static_cast<int64_t>(micro_batches) * static_cast<int64_t>(names.size()) * kFigures},
                                                  s * layout.group_size);
        std::size_t at = 0;
        for (int m = 0; m < micro_batches; ++m) {
          for (const auto& name : names) {
            const float* f = &figures.data[at];
            at += kFigures;
            char line[256];
            if (f[0] != 1.0f) {
              std::snprintf(line, sizeof line, "check: micro-batch %d '%s': the shape differs from the unsharded model's: FAILED\n", m,
                            name.c_str());
              status = 1;
            } else {
              const bool ok = f[3] == 1.0f;
              std::snprintf(line, sizeof line,
                            "check: micro-batch %d '%s': max abs error %.3g, max rel error %.3g (tolerance %.0e): %s\n", m,
                            name.c_str(), f[1], f[2], kCheckTolerance, ok ? "OK" : "FAILED");
              if (!ok) status = 1;
            }
            lines.push_back(line);
          }
        }
      }
      stats[0] = figures_of(result);
      const std::vector<int64_t> shape = encode_figures(stats[0]).shape;
      for (int s = 1; s < layout.stages; ++s) stats[s] = decode_figures(comm.recv(shape, s * layout.group_size));
    } else if (leader) {
      if (command.check && !names_of_stage.empty()) comm.send(checked, 0);
      comm.send(encode_figures(figures_of(result)), 0);
    }
  } catch (const std::exception& e) {
    comm.abort(e.what());
  }
  if (me != 0) return 0;

  std::string mesh_text;
  for (int64_t e : staged.mesh) mesh_text += (mesh_text.empty() ? "" : "x") + std::to_string(e);
  std::printf("shard-run: %s on mesh %s (%d ranks), backend %s, %d stages of %d devices, %d micro-batches\n",
              command.model_name.c_str(), mesh_text.c_str(), comm.size(), command.backend.c_str(), layout.stages,
              layout.group_size, micro_batches);
  std::printf("%-6s %6s %20s %20s %16s %16s\n", "stage", "nodes", "collectives sent", "cost model", "sent to stages",
              "schedule says");
  for (int s = 0; s < layout.stages; ++s) {
    const auto& d = stats[s];
    bool match = true;
    for (std::size_t k = 0; k < std::size(costs::kCommunicatingKinds); ++k) match = match && d[4 + 2 * k] == d[5 + 2 * k];
    std::printf("%-6d %6zu %20lld %20lld %16lld %16lld%s\n", s, staged.stages[s].nodes.size(), static_cast<long long>(d[0]),
                static_cast<long long>(d[1]), static_cast<long long>(d[2]), static_cast<long long>(d[3]),
                match ? "" : "  MISMATCH");
    if (!match) status = 1;
  }
  std::printf("(bytes sent by each group's first rank over all micro-batches)\n");
  for (const auto& line : lines) std::fputs(line.c_str(), stdout);
  return status;
}

}  // namespace shardsynth::runtime
