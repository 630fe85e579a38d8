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

namespace {

constexpr std::size_t kKindCount = std::size(costs::kCommunicatingKinds);

// What one rank knows of the staged run: its stage, the stage graphs and
// plans, and which tensors and parameters cross the cuts.
struct StageView {
  StageLayout layout;                              // stages and ranks per stage group
  ir::Mesh sub;                                    // a stage group's mesh
  std::vector<ir::Graph> graphs;                   // per stage: its graph
  std::vector<PlanSpecs> plans;                    // per stage: its plan on `sub`
  std::vector<std::set<std::string>> stores;       // per stage: the parameters it stores
  int me = 0;                                      // this rank
  int stage = 0;                                   // this rank's stage
  bool leader = false;                             // the first rank of its stage group
  std::set<std::string> own;                       // the model inputs and nodes of this stage
  std::vector<std::string> outputs;                // the model outputs this stage computes (the loss is taken there)
  std::set<std::string> wanted;                    // received activations whose gradients go back
};

// Every stage's graph and plan, parsed before any rank communicates (a bad
// plan is one line on every rank).
StageView stage_view(const ir::Graph& graph, const ir::StagedSchedule& staged) {
  StageView view{stage_layout(staged.mesh), stage_group_mesh(staged.mesh)};
  for (const auto& st : staged.stages) {
    view.graphs.push_back(ir::stage_graph(graph, st.nodes));
    view.plans.push_back(parse_plan(view.graphs.back(), view.sub, st.schedule));
    view.stores.push_back(stored_by(view.graphs.back()));
  }
  return view;
}

// Where rank `me` stands in it.
void locate(StageView& view, const ir::StagedSchedule& staged, int me) {
  view.me = me;
  view.stage = stage_of_rank(view.layout, me);
  view.leader = me % view.layout.group_size == 0;
  view.own = std::set<std::string>(staged.stages[view.stage].nodes.begin(), staged.stages[view.stage].nodes.end());
  const ir::Graph& g = view.graphs[view.stage];
  view.outputs = stage_model_outputs(g);
  for (ir::Vertex v : g.topological_order()) {
    const ir::Node& node = g.node(v);
    if (node.kind == ir::kPlaceholder && node.target == ir::kReceivedTarget && node.type.dtype != ir::DType::int64) {
      view.wanted.insert(node.name);
    }
  }
}

// What a stage's training measured.
struct StageTrace {
  int64_t p2p_sent = 0;                              // bytes sent to other stages
  int64_t p2p_expected = 0;                          // what the schedule's transfers say
  int64_t tied_bytes = 0;                            // bytes of tied gradients exchanged whole
  std::vector<double> losses;                        // per step: the mean loss over micro-batches
  std::map<std::string, Tensor> first_grads;         // whole gradients after step 1
  std::map<std::string, Tensor> params;              // whole parameters after the last step
  std::map<CollectiveKind, int64_t> sent;            // collective bytes this rank sent
  std::map<CollectiveKind, int64_t> predicted;       // what the cost model prices for them
};

// GPipe training of one stage group (see the header): forward steps, the
// same steps reversed, tied-gradient exchange, one optimizer step.
class StageTrainer {
 public:
  StageTrainer(const ir::Graph& graph, const ir::StagedSchedule& staged, const StageView& view, TrainSetup setup,
               int micro_batches, Communicator& comm)
      : graph_(graph), staged_(staged), view_(view), setup_(std::move(setup)), micro_batches_(micro_batches),
        comm_(comm), loss_(choose_loss(graph)), steps_(stage_steps(staged.transfers, view.stage, micro_batches)) {}

  const LossChoice& loss() const { return loss_; }
  const TrainSetup& setup() const { return setup_; }

  StageTrace train() {
    StageCommunicator group(comm_);
    TrainingState state(view_.graphs[view_.stage], view_.sub, view_.plans[view_.stage], group, setup_);
    for (int step = 1; step <= setup_.options.steps; ++step) {
      state.begin_step();
      MicroBatches mb(micro_batches_);
      const double loss_sum = forward(state, mb);
      backward(state, mb);
      exchange_tied_grads(state);
      trace_.losses.push_back(loss_sum / micro_batches_);
      if (step == 1) trace_.first_grads = state.whole_grads();
      state.end_step();
    }
    trace_.params = state.whole_params();
    trace_.sent = state.sent();
    trace_.predicted = state.predicted();
    return std::move(trace_);
  }

 private:
  // Per micro-batch state of one optimizer step.
  struct MicroBatches {
    explicit MicroBatches(int count) : passes(count), received(count), out_grads(count), back(count) {}
    std::vector<std::unique_ptr<ForwardPass>> passes;         // forward passes kept for the backward
    std::vector<std::map<std::string, Tensor>> received;      // activations received for the next compute
    std::vector<std::map<std::string, Tensor>> out_grads;     // gradients of the stage's outputs
    std::vector<std::map<std::string, Tensor>> back;          // gradients of received activations, to send back
  };

  double forward(TrainingState& state, MicroBatches& mb) {
    double loss_sum = 0;
    for (const PipelineStep& st : steps_) {
      if (st.kind == StepKind::compute) {
        loss_sum += compute(state, mb, st.micro_batch);
      } else if (st.kind == StepKind::receive) {
        receive_activation(mb, st);
      } else {
        send_activation(state, mb, st);
      }
    }
    return loss_sum;
  }

  double compute(TrainingState& state, MicroBatches& mb, int m) {
    const auto all = micro_batch_inputs(graph_, setup_.seed, m);
    std::map<std::string, Tensor> inputs;
    for (const auto& [name, value] : all) {
      if (view_.own.count(name)) inputs.emplace(name, value);
    }
    mb.passes[m] = state.forward(&inputs, &mb.received[m]);
    mb.received[m].clear();
    double loss_sum = 0;
    for (const auto& name : view_.outputs) {
      const Tensor* labels = loss_.kind == LossKind::next_token ? &all.at(loss_.labels) : nullptr;
      loss_sum += state.take_loss(*mb.passes[m], name, loss_, labels, setup_.seed + static_cast<uint64_t>(m),
                                  1.0 / micro_batches_, mb.out_grads[m]);
    }
    return loss_sum;
  }

  const ir::TensorType& type_of(const std::string& tensor) const { return graph_.node(*graph_.find(tensor)).type; }

  void receive_activation(MicroBatches& mb, const PipelineStep& st) {
    const ir::StageTransfer& t = staged_.transfers.at(st.transfer);
    const ir::TensorType& type = type_of(t.tensor);
    std::vector<int64_t> wire_shape = ir::local_shape(type.shape, view_.plans[view_.stage].of(t.tensor), view_.sub);
    if (wire_lanes(type.dtype) > 1) wire_shape.push_back(wire_lanes(type.dtype));
    mb.received[st.micro_batch][t.tensor] =
        from_wire(comm_.recv(wire_shape, peer_rank(view_.layout, view_.me, t.from_stage)), type.dtype);
  }

  void send_activation(TrainingState& state, MicroBatches& mb, const PipelineStep& st) {
    const ir::StageTransfer& t = staged_.transfers.at(st.transfer);
    const ir::TensorType& type = type_of(t.tensor);
    const ir::Spec& from = view_.plans[view_.stage].of(t.tensor + ir::kSendSuffix);
    const ir::Spec& to = view_.plans[t.to_stage].of(t.tensor);
    const Tensor shard = to_wire(
        state.resharder().move(mb.passes[st.micro_batch]->value(t.tensor + ir::kSendSuffix), type, from, to), type.dtype);
    comm_.send(shard, peer_rank(view_.layout, view_.me, t.to_stage));
    count_p2p(shard, t);
  }

  void count_p2p(const Tensor& sent, const ir::StageTransfer& t) {
    trace_.p2p_sent += sent.numel() * static_cast<int64_t>(sizeof(float));
    trace_.p2p_expected += t.bytes;
  }

  // Backward: every step reversed, in reverse order.
  void backward(TrainingState& state, MicroBatches& mb) {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      const int m = it->micro_batch;
      if (it->kind == StepKind::compute) {
        mb.back[m] = state.backward(*mb.passes[m], std::move(mb.out_grads[m]), view_.wanted);
        mb.passes[m].reset();
        continue;
      }
      const ir::StageTransfer& t = staged_.transfers.at(it->transfer);
      if (!carries_gradient(graph_, t.tensor)) continue;
      if (it->kind == StepKind::send) {
        receive_gradient(state, mb.out_grads[m], t);
      } else {
        send_gradient(mb.back[m], t);
      }
    }
  }

  // The gradient of what was sent comes back.
  void receive_gradient(TrainingState& state, std::map<std::string, Tensor>& out_grads, const ir::StageTransfer& t) {
    const ir::TensorType& type = type_of(t.tensor);
    const ir::Spec to = ir::without_partial(view_.plans[t.to_stage].of(t.tensor));
    const ir::Spec from = ir::without_partial(view_.plans[view_.stage].of(t.tensor + ir::kSendSuffix));
    const Tensor grad =
        comm_.recv(ir::local_shape(type.shape, to, view_.sub), peer_rank(view_.layout, view_.me, t.to_stage));
    accumulate(out_grads[t.tensor + ir::kSendSuffix], state.resharder().move(grad, type, to, from));
  }

  // The gradient of what was received goes back.
  void send_gradient(const std::map<std::string, Tensor>& back, const ir::StageTransfer& t) {
    const ir::TensorType& type = type_of(t.tensor);
    const ir::Spec spec = ir::without_partial(view_.plans[view_.stage].of(t.tensor));
    const auto found = back.find(t.tensor);
    const Tensor grad = found != back.end() ? found->second : zeros(ir::local_shape(type.shape, spec, view_.sub));
    comm_.send(grad, peer_rank(view_.layout, view_.me, t.from_stage));
    count_p2p(grad, t);
  }

  // Parameters stored by several stages (ties across a cut): exchange the
  // gradients whole, member i with member i, lower stage first.
  void exchange_tied_grads(TrainingState& state) {
    const int s = view_.stage;
    for (const auto& name : state.stored_names()) {
      bool shared = false;
      for (int h = 0; h < view_.layout.stages; ++h) shared = shared || (h != s && view_.stores[h].count(name));
      if (!shared) continue;
      const Tensor mine = state.whole_grad(name);
      Tensor others = zeros(mine.shape);
      for (int h = 0; h < view_.layout.stages; ++h) {
        if (h == s || !view_.stores[h].count(name)) continue;
        accumulate(others, swap_with(mine, peer_rank(view_.layout, view_.me, h), s < h));
        trace_.tied_bytes += mine.numel() * static_cast<int64_t>(sizeof(float));
      }
      state.add_to_grad(name, others);
    }
  }

  // Sends `mine` to `peer` and receives theirs; the lower stage sends first.
  Tensor swap_with(const Tensor& mine, int peer, bool send_first) {
    if (send_first) {
      comm_.send(mine, peer);
      return comm_.recv(mine.shape, peer);
    }
    Tensor theirs = comm_.recv(mine.shape, peer);
    comm_.send(mine, peer);
    return theirs;
  }

  const ir::Graph& graph_;                 // the whole model
  const ir::StagedSchedule& staged_;       // stages, their plans, transfers
  const StageView& view_;                  // this rank's stage
  TrainSetup setup_;                       // with the backend's kernels
  int micro_batches_;                      // per optimizer step
  Communicator& comm_;                     // the whole world
  LossChoice loss_;                        // the model's loss
  std::vector<PipelineStep> steps_;        // this stage's forward program
  StageTrace trace_;                       // what was measured
};

// Each group's first rank checks its own stage against the unsharded
// reference (with --check) and reports the bytes and checks to rank 0.
StageReport stage_report(const ir::Graph& graph, const StageView& view, const StageTrace& trace,
                         const StageTrainer& trainer, int micro_batches, bool check) {
  StageReport report;
  for (CollectiveKind kind : costs::kCommunicatingKinds) report.bytes.push_back(trace.sent.count(kind) ? trace.sent.at(kind) : 0);
  for (CollectiveKind kind : costs::kCommunicatingKinds) {
    report.bytes.push_back(trace.predicted.count(kind) ? trace.predicted.at(kind) : 0);
  }
  report.bytes.insert(report.bytes.end(), {trace.p2p_sent, trace.p2p_expected, trace.tied_bytes});
  const bool has_loss = !view.outputs.empty();
  report.checks.assign(6, 0.0f);
  report.checks[0] = has_loss ? 1.0f : 0.0f;
  std::vector<double> reference_losses(trace.losses.size(), 0.0);
  if (view.leader && check) {
    const TrainSetup& setup = trainer.setup();
    const TrainResult reference = train_reference(graph, setup, micro_batches, [&](int m) {
      return micro_batch_inputs(graph, setup.seed, m);
    });
    reference_losses = reference.losses;
    double loss_rel = 0;
    for (std::size_t i = 0; i < trace.losses.size() && has_loss; ++i) {
      loss_rel = std::max(loss_rel, std::fabs(trace.losses[i] - reference.losses[i]) /
                                        std::max(std::fabs(reference.losses[i]), 1e-30));
    }
    const TrainOptions& options = setup.options;
    const Worst grads = compare_named(reference.first_grads, trace.first_grads, 0);
    const double slack = options.optimizer == OptimizerKind::adam ? kAdamNoiseSteps * options.lr * options.steps : 0;
    const Worst trained = compare_named(reference.params, trace.params, slack);
    report.checks[1] = static_cast<float>(loss_rel);
    report.checks[2] = static_cast<float>(grads.rel);
    report.checks[3] = grads.ok ? 1.0f : 0.0f;
    report.checks[4] = static_cast<float>(trained.rel);
    report.checks[5] = trained.ok ? 1.0f : 0.0f;
  }
  for (double l : trace.losses) report.checks.push_back(static_cast<float>(l));
  for (double l : reference_losses) report.checks.push_back(static_cast<float>(l));
  return report;
}

// Rank 0 gathers every group leader's report (its own first).
std::vector<StageReport> gather_reports(const StageView& view, const StageReport& report, Communicator& comm) {
  std::vector<StageReport> reports(view.layout.stages);
  if (view.me == 0) {
    reports[0] = report;
    const auto byte_shape = encode_figures(report.bytes).shape;
    for (int st = 1; st < view.layout.stages; ++st) {
      reports[st].bytes = decode_figures(comm.recv(byte_shape, st * view.layout.group_size));
      reports[st].checks = comm.recv({static_cast<int64_t>(report.checks.size())}, st * view.layout.group_size).data;
    }
  } else if (view.leader) {
    comm.send(encode_figures(report.bytes), 0);
    comm.send(Tensor{{static_cast<int64_t>(report.checks.size())}, report.checks}, 0);
  }
  return reports;
}

void print_losses(const std::vector<StageReport>& reports, int steps, bool check) {
  const StageReport* loss_stage = nullptr;
  for (const auto& r : reports) {
    if (r.checks[0] == 1.0f) loss_stage = &r;
  }
  std::printf("%-6s %16s%s\n", "step", "loss", check ? "        unsharded" : "");
  for (int i = 0; i < steps && loss_stage; ++i) {
    if (check) {
      std::printf("%-6d %16.8f %16.8f\n", i + 1, loss_stage->checks[6 + i], loss_stage->checks[6 + steps + i]);
    } else {
      std::printf("%-6d %16.8f\n", i + 1, loss_stage->checks[6 + i]);
    }
  }
}

// Per stage: collective bytes against the plan's, point-to-point bytes
// against the schedule's, tied-sync bytes. Returns whether all match.
bool print_stage_bytes(const std::vector<StageReport>& reports) {
  std::printf("%-6s %20s %20s %16s %16s %16s\n", "stage", "collectives sent", "cost model", "sent to stages",
              "schedule says", "tied sync");
  bool all_match = true;
  for (std::size_t st = 0; st < reports.size(); ++st) {
    const auto& b = reports[st].bytes;
    int64_t total_sent = 0, total_predicted = 0;
    bool match = true;
    for (std::size_t k = 0; k < kKindCount; ++k) {
      total_sent += b[k];
      total_predicted += b[kKindCount + k];
      match = match && b[k] == b[kKindCount + k];
    }
    match = match && b[2 * kKindCount] == b[2 * kKindCount + 1];
    std::printf("%-6d %20lld %20lld %16lld %16lld %16lld%s\n", static_cast<int>(st), static_cast<long long>(total_sent),
                static_cast<long long>(total_predicted), static_cast<long long>(b[2 * kKindCount]),
                static_cast<long long>(b[2 * kKindCount + 1]), static_cast<long long>(b[2 * kKindCount + 2]),
                match ? "" : "  MISMATCH");
    all_match = all_match && match;
  }
  std::printf("(bytes sent by each group's first rank over all steps and micro-batches: forward, backward, gradient\n"
              " syncs; \"schedule says\" counts each transfer's bytes once per way; tied sync is not in any plan)\n");
  return all_match;
}

// The --check lines over every stage's report. Returns whether all pass.
bool print_checks(const std::vector<StageReport>& reports, int steps) {
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
  std::printf("check: parameters after step %d, max rel error %.3g: %s\n", steps, param_rel, params_ok ? "OK" : "FAILED");
  return loss_ok && grads_ok && params_ok;
}

}  // namespace

int run_staged_train_command(const ir::Graph& graph, const ir::StagedSchedule& staged, const StagedTrainCommand& command) {
  const TrainOptions& options = command.setup.options;
  const int micro_batches = command.micro_batches;
  validate_staged_training(graph, staged, options, micro_batches);
  StageView view = stage_view(graph, staged);
  Backend backend = make_backend(command.backend, staged.mesh);
  Communicator& comm = *backend.comm;
  locate(view, staged, comm.rank());
  TrainSetup setup = command.setup;
  setup.kernels = backend.kernels;
  setup.backward = backend.backward;
  StageTrainer trainer(graph, staged, view, setup, micro_batches, comm);
  StageTrace trace;
  try {
    trace = trainer.train();
  } catch (const std::exception& e) {
    comm.abort(e.what());
  }
  const StageReport report = stage_report(graph, view, trace, trainer, micro_batches, command.check);
  std::vector<StageReport> reports;
  try {
    reports = gather_reports(view, report, comm);
  } catch (const std::exception& e) {
    comm.abort(e.what());
  }
  if (view.me != 0) return 0;
  std::string mesh_text;
  for (int64_t e : staged.mesh) mesh_text += (mesh_text.empty() ? "" : "x") + std::to_string(e);
  std::printf("shard-run: %s on mesh %s (%d ranks), backend %s, %d stages of %d devices, %d micro-batches, "
              "training %d step%s (%s, lr %.3g), loss %s\n",
              command.model_name.c_str(), mesh_text.c_str(), comm.size(), command.backend.c_str(), view.layout.stages,
              view.layout.group_size, micro_batches, options.steps, options.steps == 1 ? "" : "s",
              optimizer_name(options.optimizer).c_str(), options.lr, loss_name(trainer.loss().kind).c_str());
  print_losses(reports, options.steps, command.check);
  int status = print_stage_bytes(reports) ? 0 : 1;
  if (command.check && !print_checks(reports, options.steps)) status = 1;
  return status;
}

}  // namespace shardsynth::runtime
