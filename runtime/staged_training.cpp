#include "runtime/staged_training.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include "ir/error.hpp"
#include "ir/op_table.hpp"
#include "runtime/backend.hpp"
#include "runtime/forward_pass.hpp"
#include "runtime/packing.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/run_check.hpp"
#include "runtime/shard_run_staged.hpp"
#include "runtime/shard_run_train.hpp"
#include "runtime/stage_communicator.hpp"
#include "runtime/training_state.hpp"

namespace shardsynth::runtime {
namespace {

using costs::CollectiveKind;

constexpr CollectiveKind kKinds[] = {CollectiveKind::all_gather, CollectiveKind::reduce_scatter,
                                     CollectiveKind::all_reduce, CollectiveKind::all_to_all};
constexpr int64_t kFloatBytes = sizeof(float);

// Whether the tensor a transfer carries sends a gradient back in training:
// an activation, not a model input or an integer tensor.
bool carries_gradient(const ir::Graph& graph, const std::string& tensor) {
  const ir::Node& node = graph.node(*graph.find(tensor));
  return node.kind != ir::kPlaceholder && node.type.dtype != ir::DType::int64;
}

// Full names of the parameters a stage graph stores (TrainingState's rule:
// its own, and a tie to a parameter it does not hold).
std::set<std::string> stored_by(const ir::Graph& stage_graph) {
  std::set<std::string> out;
  for (ir::Vertex v : stage_graph.topological_order()) {
    for (const ir::Param& p : stage_graph.node(v).params) {
      if (p.tied_to.empty()) out.insert(stage_graph.node(v).name + "." + p.name);
    }
  }
  for (ir::Vertex v : stage_graph.topological_order()) {
    for (const ir::Param& p : stage_graph.node(v).params) {
      if (!p.tied_to.empty() && !out.count(p.tied_to)) out.insert(p.tied_to);
    }
  }
  return out;
}

// What one stage group's first rank reports to rank 0.
struct StageReport {
  std::vector<int64_t> bytes;  // per kind sent, per kind predicted, p2p sent, p2p expected, tied-sync bytes
  std::vector<float> checks;   // has loss, loss rel, grad rel, grad ok, param rel, param ok, then losses and reference losses per step
};

struct Worst {
  double rel = 0;   // largest relative error over the tensors compared
  bool ok = true;   // every tensor within tolerance
};

Worst compare_named(const std::map<std::string, Tensor>& expected, const std::map<std::string, Tensor>& actual,
                    double slack) {
  Worst worst;
  for (const auto& [name, got] : actual) {
    const auto want = expected.find(name);
    if (want == expected.end()) {
      worst.ok = false;
      continue;
    }
    const OutputComparison c = compare_output(want->second, got, kTrainTolerance);
    const double scale = c.max_rel > 0 ? c.max_abs / c.max_rel : 0;
    worst.ok = worst.ok && c.same_shape && (c.ok || c.max_abs <= kTrainTolerance * scale + slack);
    worst.rel = std::max(worst.rel, c.max_rel);
  }
  return worst;
}

}  // namespace

void validate_staged_training(const ir::Graph& graph, const ir::StagedSchedule& staged, const TrainOptions& options,
                              int micro_batches) {
  validate_staged_schedule(graph, staged);
  for (const auto& stage : staged.stages) {
    validate_training(stage.schedule, options);
  }
  if (micro_batches < 1) throw ir::InputError("--micro-batches " + std::to_string(micro_batches) + ": must be at least 1");
}

int run_staged_train_command(const ir::Graph& graph, const ir::StagedSchedule& staged, const StagedTrainCommand& command) {
  const TrainOptions& options = command.setup.options;
  const int micro_batches = command.micro_batches;
  validate_staged_training(graph, staged, options, micro_batches);
  const StageLayout layout = stage_layout(staged.mesh);
  const ir::Mesh sub = stage_group_mesh(staged.mesh);
  std::vector<ir::Graph> graphs;
  std::vector<PlanSpecs> plans;
  for (const auto& st : staged.stages) {
    graphs.push_back(ir::stage_graph(graph, st.nodes));
    plans.push_back(parse_plan(graphs.back(), sub, st.schedule));
  }
  Backend backend = make_backend(command.backend, staged.mesh);
  Communicator& comm = *backend.comm;
  const int me = comm.rank();
  const int s = stage_of_rank(layout, me);
  const bool leader = me % layout.group_size == 0;
  const ir::Graph& g = graphs[s];
  const std::set<std::string> own(staged.stages[s].nodes.begin(), staged.stages[s].nodes.end());
  const std::vector<std::string> outputs = stage_model_outputs(g);
  std::set<std::string> wanted;  // received activations whose gradients go back
  for (ir::Vertex v : g.topological_order()) {
    const ir::Node& node = g.node(v);
    if (node.kind == ir::kPlaceholder && node.target == ir::kReceivedTarget && node.type.dtype != ir::DType::int64) {
      wanted.insert(node.name);
    }
  }
  std::vector<std::set<std::string>> stores;
  for (const auto& sg : graphs) stores.push_back(stored_by(sg));

  TrainSetup setup = command.setup;
  setup.kernels = backend.kernels;
  setup.backward = backend.backward;
  const LossChoice loss = choose_loss(graph);
  const std::vector<PipelineStep> steps = stage_steps(staged.transfers, s, micro_batches);
  int64_t p2p_sent = 0, p2p_expected = 0, tied_bytes = 0;
  std::vector<double> losses;
  std::map<std::string, Tensor> first_grads, params;
  std::map<CollectiveKind, int64_t> sent, predicted;
  try {
    StageCommunicator group(comm);
    TrainingState state(g, sub, plans[s], group, setup);
    for (int step = 1; step <= options.steps; ++step) {
      state.begin_step();
      std::vector<std::unique_ptr<ForwardPass>> passes(micro_batches);
      std::vector<std::map<std::string, Tensor>> received(micro_batches), out_grads(micro_batches), back(micro_batches);
      double loss_sum = 0;
      for (const PipelineStep& st : steps) {
        const int m = st.micro_batch;
        if (st.kind == StepKind::compute) {
          const auto all = micro_batch_inputs(graph, setup.seed, m);
          std::map<std::string, Tensor> inputs;
          for (const auto& [name, value] : all) {
            if (own.count(name)) inputs.emplace(name, value);
          }
          passes[m] = state.forward(&inputs, &received[m]);
          received[m].clear();
          for (const auto& name : outputs) {
            const Tensor* labels = loss.kind == LossKind::next_token ? &all.at(loss.labels) : nullptr;
            loss_sum += state.take_loss(*passes[m], name, loss, labels, setup.seed + static_cast<uint64_t>(m),
                                        1.0 / micro_batches, out_grads[m]);
          }
          continue;
        }
        const ir::StageTransfer& t = staged.transfers.at(st.transfer);
        const ir::TensorType& type = graph.node(*graph.find(t.tensor)).type;
        if (st.kind == StepKind::receive) {
          std::vector<int64_t> wire_shape = ir::local_shape(type.shape, plans[s].of(t.tensor), sub);
          if (wire_lanes(type.dtype) > 1) wire_shape.push_back(wire_lanes(type.dtype));
          received[m][t.tensor] = from_wire(comm.recv(wire_shape, peer_rank(layout, me, t.from_stage)), type.dtype);
        } else {
          const ir::Spec& from = plans[s].of(t.tensor + ir::kSendSuffix);
          const ir::Spec& to = plans[t.to_stage].of(t.tensor);
          const Tensor shard =
              to_wire(state.resharder().move(passes[m]->value(t.tensor + ir::kSendSuffix), type, from, to), type.dtype);
          comm.send(shard, peer_rank(layout, me, t.to_stage));
          p2p_sent += shard.numel() * kFloatBytes;
          p2p_expected += t.bytes;
        }
      }
      // Backward: every step reversed, in reverse order.
      for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
        const int m = it->micro_batch;
        if (it->kind == StepKind::compute) {
          back[m] = state.backward(*passes[m], std::move(out_grads[m]), wanted);
          passes[m].reset();
          continue;
        }
        const ir::StageTransfer& t = staged.transfers.at(it->transfer);
        if (!carries_gradient(graph, t.tensor)) continue;
        const ir::TensorType& type = graph.node(*graph.find(t.tensor)).type;
        if (it->kind == StepKind::send) {  // the gradient of what was sent comes back
          const ir::Spec to = ir::without_partial(plans[t.to_stage].of(t.tensor));
          const ir::Spec from = ir::without_partial(plans[s].of(t.tensor + ir::kSendSuffix));
          const Tensor grad = comm.recv(ir::local_shape(type.shape, to, sub), peer_rank(layout, me, t.to_stage));
          accumulate(out_grads[m][t.tensor + ir::kSendSuffix], state.resharder().move(grad, type, to, from));
        } else {  // the gradient of what was received goes back
          const ir::Spec spec = ir::without_partial(plans[s].of(t.tensor));
          const auto found = back[m].find(t.tensor);
          const Tensor grad = found != back[m].end() ? found->second : zeros(ir::local_shape(type.shape, spec, sub));
          comm.send(grad, peer_rank(layout, me, t.from_stage));
          p2p_sent += grad.numel() * kFloatBytes;
          p2p_expected += t.bytes;
        }
      }
      // Parameters stored by several stages (ties across a cut): exchange
      // the gradients whole, member i with member i, lower stage first.
      for (const auto& name : state.stored_names()) {
        bool shared = false;
        for (int h = 0; h < layout.stages; ++h) shared = shared || (h != s && stores[h].count(name));
        if (!shared) continue;
        const Tensor mine = state.whole_grad(name);
        Tensor others = zeros(mine.shape);
        for (int h = 0; h < layout.stages; ++h) {
          if (h == s || !stores[h].count(name)) continue;
          const int peer = peer_rank(layout, me, h);
          Tensor theirs;
          if (s < h) {
            comm.send(mine, peer);
            theirs = comm.recv(mine.shape, peer);
          } else {
            theirs = comm.recv(mine.shape, peer);
            comm.send(mine, peer);
          }
          tied_bytes += mine.numel() * kFloatBytes;
          accumulate(others, theirs);
        }
        state.add_to_grad(name, others);
      }
      losses.push_back(loss_sum / micro_batches);
      if (step == 1) first_grads = state.whole_grads();
      state.end_step();
    }
    params = state.whole_params();
    sent = state.sent();
    predicted = state.predicted();
  } catch (const std::exception& e) {
    comm.abort(e.what());
  }

  // Each group's first rank checks its own stage and reports to rank 0.
  StageReport report;
  for (CollectiveKind kind : kKinds) report.bytes.push_back(sent.count(kind) ? sent.at(kind) : 0);
  for (CollectiveKind kind : kKinds) report.bytes.push_back(predicted.count(kind) ? predicted.at(kind) : 0);
  report.bytes.insert(report.bytes.end(), {p2p_sent, p2p_expected, tied_bytes});
  const bool has_loss = !outputs.empty();
  report.checks.assign(6, 0.0f);
  report.checks[0] = has_loss ? 1.0f : 0.0f;
  std::vector<double> reference_losses(losses.size(), 0.0);
  if (leader && command.check) {
    const TrainResult reference = train_reference(graph, setup, micro_batches, [&](int m) {
      return micro_batch_inputs(graph, setup.seed, m);
    });
    reference_losses = reference.losses;
    double loss_rel = 0;
    for (std::size_t i = 0; i < losses.size() && has_loss; ++i) {
      loss_rel = std::max(loss_rel, std::fabs(losses[i] - reference.losses[i]) / std::max(std::fabs(reference.losses[i]), 1e-30));
    }
    const Worst grads = compare_named(reference.first_grads, first_grads, 0);
    const double slack = options.optimizer == OptimizerKind::adam ? kAdamNoiseSteps * options.lr * options.steps : 0;
    const Worst trained = compare_named(reference.params, params, slack);
    report.checks[1] = static_cast<float>(loss_rel);
    report.checks[2] = static_cast<float>(grads.rel);
    report.checks[3] = grads.ok ? 1.0f : 0.0f;
    report.checks[4] = static_cast<float>(trained.rel);
    report.checks[5] = trained.ok ? 1.0f : 0.0f;
  }
  for (double l : losses) report.checks.push_back(static_cast<float>(l));
  for (double l : reference_losses) report.checks.push_back(static_cast<float>(l));

  std::vector<StageReport> reports(layout.stages);
  try {
    if (me == 0) {
      reports[0] = report;
      const auto byte_shape = encode_figures(report.bytes).shape;
      for (int st = 1; st < layout.stages; ++st) {
        reports[st].bytes = decode_figures(comm.recv(byte_shape, st * layout.group_size));
        reports[st].checks = comm.recv({static_cast<int64_t>(report.checks.size())}, st * layout.group_size).data;
      }
    } else if (leader) {
      comm.send(encode_figures(report.bytes), 0);
      comm.send(Tensor{{static_cast<int64_t>(report.checks.size())}, report.checks}, 0);
    }
  } catch (const std::exception& e) {
    comm.abort(e.what());
  }
  if (me != 0) return 0;

  int status = 0;
  std::string mesh_text;
  for (int64_t e : staged.mesh) mesh_text += (mesh_text.empty() ? "" : "x") + std::to_string(e);
  std::printf("shard-run: %s on mesh %s (%d ranks), backend %s, %d stages of %d devices, %d micro-batches, "
              "training %d step%s (%s, lr %.3g), loss %s\n",
              command.model_name.c_str(), mesh_text.c_str(), comm.size(), command.backend.c_str(), layout.stages,
              layout.group_size, micro_batches, options.steps, options.steps == 1 ? "" : "s",
              optimizer_name(options.optimizer).c_str(), options.lr, loss_name(loss.kind).c_str());
  const StageReport* loss_stage = nullptr;
  for (const auto& r : reports) {
    if (r.checks[0] == 1.0f) loss_stage = &r;
  }
  std::printf("%-6s %16s%s\n", "step", "loss", command.check ? "        unsharded" : "");
  for (int i = 0; i < options.steps && loss_stage; ++i) {
    if (command.check) {
      std::printf("%-6d %16.8f %16.8f\n", i + 1, loss_stage->checks[6 + i], loss_stage->checks[6 + options.steps + i]);
    } else {
      std::printf("%-6d %16.8f\n", i + 1, loss_stage->checks[6 + i]);
    }
  }
  std::printf("%-6s %20s %20s %16s %16s %16s\n", "stage", "collectives sent", "cost model", "sent to stages",
              "schedule says", "tied sync");
  for (int st = 0; st < layout.stages; ++st) {
    const auto& b = reports[st].bytes;
    int64_t total_sent = 0, total_predicted = 0;
    bool match = true;
    for (std::size_t k = 0; k < std::size(kKinds); ++k) {
      total_sent += b[k];
      total_predicted += b[4 + k];
      match = match && b[k] == b[4 + k];
    }
    match = match && b[8] == b[9];
    std::printf("%-6d %20lld %20lld %16lld %16lld %16lld%s\n", st, static_cast<long long>(total_sent),
                static_cast<long long>(total_predicted), static_cast<long long>(b[8]), static_cast<long long>(b[9]),
                static_cast<long long>(b[10]), match ? "" : "  MISMATCH");
    if (!match) status = 1;
  }
  std::printf("(bytes sent by each group's first rank over all steps and micro-batches: forward, backward, gradient\n"
              " syncs; \"schedule says\" counts each transfer's bytes once per way; tied sync is not in any plan)\n");
  if (command.check) {
    double loss_rel = 0, grad_rel = 0, param_rel = 0;
    bool grads_ok = true, params_ok = true;
    for (const auto& r : reports) {
      loss_rel = std::max(loss_rel, static_cast<double>(r.checks[1]));
      grad_rel = std::max(grad_rel, static_cast<double>(r.checks[2]));
      param_rel = std::max(param_rel, static_cast<double>(r.checks[4]));
      grads_ok = grads_ok && r.checks[3] == 1.0f;
      params_ok = params_ok && r.checks[5] == 1.0f;
    }
    const bool loss_ok = loss_rel <= kTrainTolerance;
    std::printf("check: loss per step, max rel error %.3g (tolerance %.0e): %s\n", loss_rel, kTrainTolerance,
                loss_ok ? "OK" : "FAILED");
    std::printf("check: gradients after step 1, max rel error %.3g: %s\n", grad_rel, grads_ok ? "OK" : "FAILED");
    std::printf("check: parameters after step %d, max rel error %.3g: %s\n", options.steps, param_rel,
                params_ok ? "OK" : "FAILED");
    if (!loss_ok || !grads_ok || !params_ok) status = 1;
  }
  return status;
}

}  // namespace shardsynth::runtime
