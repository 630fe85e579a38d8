#include "runtime/shard_run_train.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "costs/precision.hpp"
#include "ir/error.hpp"
#include "runtime/half.hpp"
#include "runtime/memory_check.hpp"
#include "runtime/run_check.hpp"
#include "runtime/safetensors.hpp"

namespace shardsynth::runtime {
namespace {

struct Worst {
  std::string name;       // the tensor with the largest relative error
  OutputComparison diff;  // its comparison
  bool ok = true;         // every tensor within tolerance, with the same names and shapes
};

// `slack`: an absolute error every element may have beyond the relative tolerance.
Worst compare_all(const std::map<std::string, Tensor>& expected, const std::map<std::string, Tensor>& actual,
                  double tolerance, double slack = 0) {
  Worst worst;
  for (const auto& [name, want] : expected) {
    const auto got = actual.find(name);
    if (got == actual.end()) {
      worst.ok = false;
      worst.name = name;
      continue;
    }
    const OutputComparison c = compare_output(want, got->second, tolerance);
    const double scale = c.max_rel > 0 ? c.max_abs / c.max_rel : 0;  // the largest expected magnitude
    worst.ok = worst.ok && c.same_shape && (c.ok || c.max_abs <= tolerance * scale + slack);
    if (worst.name.empty() || c.max_rel > worst.diff.max_rel || !c.same_shape) {
      worst.name = name;
      worst.diff = c;
    }
  }
  return worst;
}

std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

}  // namespace

void validate_training(const ir::Schedule& schedule, const TrainOptions& options) {
  if (schedule.mode != "training") {
    throw ir::InputError("--train: the schedule is an " + schedule.mode +
                         " plan; synthesize one with `synth ... --mode training`, which prices the backward pass");
  }
  if (options.steps < 1) throw ir::InputError("--steps " + std::to_string(options.steps) + ": must be at least 1");
  if (!(std::isfinite(options.lr) && options.lr > 0)) {
    std::ostringstream text;
    text << "--lr " << options.lr << ": must be a positive finite number";
    throw ir::InputError(text.str());
  }
}

TrainTolerances train_tolerances(const ir::Graph& graph) {
  return has_half(graph) ? TrainTolerances{1e-2, 5e-2, 1e-2, 1.0} : TrainTolerances{};
}

int run_train_command(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule, Communicator& comm,
                      const TrainCommand& command) {
  TrainResult result;
  try {
    result = train_sharded(graph, mesh, schedule, comm, command.setup);
  } catch (const std::exception& e) {
    comm.abort(e.what());
  }
  const auto measured = result.memory ? gather_measured(*result.memory) : std::vector<MemoryMeasured>{};
  if (comm.rank() != 0) return 0;
  const TrainOptions& options = command.setup.options;
  std::string shape_text;
  for (int64_t e : mesh.shape) shape_text += (shape_text.empty() ? "" : "x") + std::to_string(e);
  std::printf("shard-run: %s on mesh %s (%lld ranks), backend %s, training %d step%s (%s, lr %s), loss %s\n",
              command.model_name.c_str(), shape_text.c_str(), static_cast<long long>(mesh.num_devices()),
              command.backend.c_str(), options.steps, options.steps == 1 ? "" : "s",
              optimizer_name(options.optimizer).c_str(), format_number(options.lr).c_str(),
              loss_name(result.loss.kind).c_str());
  if (const std::string policy = costs::policy_text(command.setup.precision, graph); !policy.empty()) {
    std::printf("precision: %s", policy.c_str());
    if (result.loss_scale != 1) {
      std::printf("; loss scale %s after the last step, %lld step%s skipped", format_number(result.loss_scale).c_str(),
                  static_cast<long long>(result.skipped), result.skipped == 1 ? "" : "s");
    }
    std::printf("\n");
  }
  TrainResult reference;
  if (command.check) reference = train_reference(graph, command.setup);
  int status = 0;
  double worst_loss = 0;
  std::printf("%-6s %16s%s\n", "step", "loss", command.check ? "        unsharded" : "");
  for (std::size_t s = 0; s < result.losses.size(); ++s) {
    if (command.check) {
      const double want = reference.losses.at(s);
      worst_loss = std::max(worst_loss, std::fabs(result.losses[s] - want) / std::max(std::fabs(want), 1e-30));
      std::printf("%-6zu %16.8f %16.8f\n", s + 1, result.losses[s], want);
    } else {
      std::printf("%-6zu %16.8f\n", s + 1, result.losses[s]);
    }
  }
  RunResult bytes;
  bytes.sent = result.sent;
  bytes.predicted = result.predicted;
  if (!print_byte_table(bytes)) status = 1;
  if (result.recomputed > 0) {
    std::printf("recomputation: %lld op forwards run again for the backward (the plan's checkpoints, all steps)\n",
                static_cast<long long>(result.recomputed));
  }
  if (result.loss.kind == LossKind::in_graph) {
    std::printf("(forward with the loss head, backward and gradient syncs of all %d steps)\n", options.steps);
  } else {
    std::printf("(forward, backward and gradient syncs of all %d steps; the loss's gather of the output is not counted)\n",
                options.steps);
  }
  if (schedule.memory && report_memory(*schedule.memory, measured, step_names(graph, true), command.check,
                                       options.optimizer == OptimizerKind::adam) != 0) {
    status = 1;
  }
  if (command.check) {
    const TrainTolerances tolerance = train_tolerances(graph);
    const bool loss_ok = worst_loss <= tolerance.loss;
    const Worst grads = compare_all(reference.first_grads, result.first_grads, tolerance.grads);
    const double slack =
        options.optimizer == OptimizerKind::adam ? tolerance.adam_lr_steps * options.lr * options.steps : 0;
    const Worst params = compare_all(reference.params, result.params, tolerance.params, slack);
    std::printf("check: loss per step, max rel error %.3g (tolerance %.0e): %s\n", worst_loss, tolerance.loss,
                loss_ok ? "OK" : "FAILED");
    std::printf("check: gradients after step 1, max rel error %.3g at '%s': %s\n", grads.diff.max_rel, grads.name.c_str(),
                grads.ok ? "OK" : "FAILED");
    std::printf("check: parameters after step %d, max rel error %.3g at '%s' (abs %.3g): %s\n", options.steps,
                params.diff.max_rel, params.name.c_str(), params.diff.max_abs, params.ok ? "OK" : "FAILED");
    if (!loss_ok || !grads.ok || !params.ok) status = 1;
  }
  if (!command.output_path.empty()) {
    try {
      write_safetensors(command.output_path, result.params);
      std::printf("output: wrote %zu trained parameters to %s\n", result.params.size(), command.output_path.c_str());
    } catch (const ir::InputError& e) {
      std::fprintf(stderr, "shard-run: error: %s\n", e.what());
      status = 2;
    }
  }
  return status;
}

}  // namespace shardsynth::runtime
