// `synth MODEL ...`: build the model's graph, then search (the default),
// score a saved plan (`synth evaluate`), plan pipeline stages (--stages),
// or draw a random legal plan (--plan random).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "costs/cost_model.hpp"
#include "costs/precision_cli.hpp"
#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "ir/graph_table.hpp"
#include "ir/schedule.hpp"
#include "ir/text_table.hpp"
#include "synth/cli/runs.hpp"
#include "synth/cli/search_text.hpp"
#include "synth/cli/step_sinks.hpp"
#include "synth/memory_figures.hpp"
#include "synth/memory_ledger.hpp"
#include "synth/plans.hpp"
#include "synth/report/cost_plot.hpp"
#include "synth/report/graphviz.hpp"
#include "synth/report/iteration_table.hpp"
#include "synth/report/memory_plot.hpp"
#include "synth/report/loss_head_report.hpp"
#include "synth/report/memory_report.hpp"
#include "synth/solver/iopddl.hpp"
#include "synth/stages/stage_report.hpp"
#include "synth/stages/stages.hpp"
#include "synth/synthesizer.hpp"

namespace shardsynth::synth::cli {
namespace {

// What every kind of model run works on.
struct ModelRun {
  const Flags& flags;                    // the command line
  std::string model_name;                // the model subcommand, or "graph"
  std::shared_ptr<spdlog::logger> out;   // tables and directives (stdout)
  std::shared_ptr<spdlog::logger> log;   // diagnostics (stderr)
  ir::Graph graph;                       // the model's graph
  ir::Mesh mesh;                         // the device mesh
  std::unique_ptr<costs::CostModel> model;  // prices every choice
  SynthOptions options;                  // lowering, pins and the solver's options
};

// Tables go to stdout exactly as the PR lays them out; diagnostics go to stderr.
void make_loggers(ModelRun& run) {
  run.out = spdlog::stdout_logger_st("synth.out");
  run.out->set_pattern("%v");
  run.log = spdlog::stderr_logger_st("synth.log");
  run.log->set_pattern("[%l] %v");
  if (run.flags.quiet) {
    run.out->set_level(spdlog::level::warn);
    run.log->set_level(spdlog::level::warn);
  } else if (run.flags.verbose) {
    run.log->set_level(spdlog::level::debug);
  }
}

SynthOptions synth_options(const Flags& flags, const ir::Graph& graph, const ir::Mesh& mesh) {
  SynthOptions options;
  options.lower.mode = costs::parse_mode(flags.mode);
  if (flags.memory > 0) options.lower.memory_budget = flags.memory;
  options.lower.recompute = !flags.no_recompute;
  options.lower.precision = costs::make_policy(flags.precision);
  costs::check_policy(options.lower.precision, graph, options.lower.mode == costs::Mode::training);
  options.family_starts = !flags.no_family_starts;
  options.cegis = cegis_options(flags);
  for (const auto& text : flags.pins) options.pins.push_back(parse_pin(text));
  for (const auto& text : flags.forbids) {
    Pin pin = parse_pin(text);
    pin.kind = PinKind::forbid;
    options.pins.push_back(pin);
  }
  if (!flags.plan.empty() && flags.plan != kRandomPlan) options.lower.allow = plan_filter(flags.plan, graph, mesh);
  return options;
}

// The run's options as recorded in a trace's header.
nlohmann::json trace_options(const Flags& flags, const std::string& model_name, const std::string& unit) {
  return {{"model", model_name == "graph" ? flags.model.graph_path : model_name},
          {"mesh", flags.mesh_file.empty() ? flags.mesh : flags.mesh_file},
          {"cost_model", flags.cost_model}, {"unit", unit}, {"mode", flags.mode}, {"memory", flags.memory},
          {"strategy", flags.strategy}, {"encoding", flags.encoding}, {"plan", flags.plan},
          {"pins", flags.pins}, {"forbids", flags.forbids}};
}

// --dot and --svg: the plan as a digraph, rendered, and the cost and memory plots beside it.
void write_pictures(const Flags& flags, const SynthResult& result, const std::optional<std::string>& dot_binary,
                    const std::string& unit) {
  if (flags.dot_path.empty() && flags.svg_path.empty()) return;
  const std::string dot = plan_dot(result.lowered, result.search.best);
  if (!flags.dot_path.empty()) ir::write_file_atomic(flags.dot_path, dot);
  if (flags.svg_path.empty()) return;
  const std::string graph_svg = render_svg(*dot_binary, dot);
  ir::write_file_atomic(flags.svg_path, graph_svg);
  ir::write_file_atomic(cost_plot_path(flags.svg_path), cost_plot_svg(plot_steps(result.search.iterations), unit));
  ir::write_file_atomic(memory_plot_path(flags.svg_path), memory_plot_svg(memory_plot(result.lowered, result.search.best)));
}

// --stages: pipeline stages (synth/stages/stages.hpp).
int run_stages(const ModelRun& run) {
  const Flags& flags = run.flags;
  if (flags.evaluate || !flags.export_path.empty() || !flags.solution_path.empty()) {
    throw ir::InputError("--stages cannot be combined with evaluate, --export-problem or --solution");
  }
  const StageOptions stage_options{flags.stages, parse_stage_balance(flags.stage_balance), flags.micro_batches};
  const auto plan = plan_stage_layout(run.graph, run.mesh, *run.model, run.options, stage_options);
  run.log->debug("stage ranges: {} asked, {} solved, {} reused", plan.cache.ranges, plan.cache.solved, plan.cache.reused);
  std::fputs(stage_report(plan, run.model->unit()).c_str(), stdout);
  std::fflush(stdout);
  if (!flags.schedule_path.empty()) ir::write_file_atomic(flags.schedule_path, ir::to_json(plan.schedule).dump(2) + "\n");
  return 0;
}

// `synth MODEL --plan random --seed N`: one seeded random legal plan, scored
// and written like a searched one; its table (unless --quiet), its cost and
// its directives on stdout.
int run_random_plan(const ModelRun& run) {
  const Flags& flags = run.flags;
  if (flags.evaluate) throw ir::InputError("--plan random cannot be combined with evaluate");
  if (!flags.trace_path.empty() || !flags.dot_path.empty() || !flags.svg_path.empty() || !flags.export_path.empty()) {
    throw ir::InputError("--plan random writes --schedule and --solution only (not --trace, --dot, --svg, --export-problem)");
  }
  const auto result = random_plan(run.graph, run.mesh, *run.model, run.options, static_cast<uint64_t>(flags.seed));
  std::string text;
  if (!flags.quiet) {
    text = format_iteration_table(result.lowered, result.search.best) + "\nRandom plan (seed " +
           std::to_string(flags.seed) + "): cost " + std::to_string(result.search.best_cost) + " " + run.model->unit() + "\n";
  }
  text += ir::directives_text(result.schedule);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (!flags.schedule_path.empty()) ir::write_file_atomic(flags.schedule_path, ir::to_json(result.schedule).dump(2) + "\n");
  if (!flags.solution_path.empty()) {
    ir::write_file_atomic(flags.solution_path, solution_to_iopddl(result.search.best).dump() + "\n");
  }
  return 0;
}

// `synth evaluate MODEL ... --schedule FILE`: the saved plan's table and cost.
int run_evaluate(const ModelRun& run) {
  const Flags& flags = run.flags;
  if (flags.schedule_path.empty()) throw ir::InputError("evaluate needs --schedule FILE");
  const auto schedule =
      ir::schedule_from_json(parse_json(ir::read_file(flags.schedule_path), flags.schedule_path), flags.schedule_path);
  const auto result = [&] {
    try {
      return evaluate_schedule(run.graph, run.mesh, *run.model, run.options, schedule);
    } catch (const ir::InputError& e) {
      throw ir::InputError(flags.schedule_path + ": " + e.what());
    }
  }();
  run.out->info("{}\n", ir::as_logged(format_iteration_table(result.lowered, result.search.best)));
  std::fputs(("Schedule cost: " + std::to_string(result.search.best_cost) + " " + run.model->unit() + "\n").c_str(), stdout);
  return 0;
}

// The log lines after a search: the plan's peak memory, and the cost with its verdict.
void log_search(const ModelRun& run, const SynthResult& result) {
  const auto& search = result.search;
  run.log->debug("{}", search_summary(search));
  const UsagePeak peak = peak_usage(result.lowered.problem, search.best);
  run.log->info("memory per device: {} bytes at its peak, time step {} (parameters{} and live activations)", peak.bytes,
                peak.step, run.options.lower.mode == costs::Mode::training ? ", gradients, Adam state, gathered copies" : "");
  const auto z3_calls = std::count_if(search.iterations.begin(), search.iterations.end(),
                                      [](const Iteration& it) { return it.source.rfind("z3", 0) == 0; });
  const Flags& flags = run.flags;
  run.log->info("{} model, {}{}: cost {} {} after {} solver calls{}", flags.cost_model, flags.mode,
                flags.plan.empty() ? "" : ", " + flags.plan + " plans only", search.best_cost, run.model->unit(), z3_calls,
                search.proven_optimal ? ", proven optimal" : " (" + search.stop_reason + ")");
}

// The best plan's heading, directives and (--memory-report) memory, as printed.
std::string result_text(const ModelRun& run, SynthResult& result) {
  const auto& search = result.search;
  std::string text = search.proven_optimal ? "\nBest solution:\n"
                                           : "\nBest solution (not proven optimal: " + search.stop_reason + "; " +
                                                 gap_text(search) + "):\n";
  if (run.flags.quiet) text.clear();
  text += ir::directives_text(result.schedule);
  if (run.flags.memory_report) {
    result.schedule.memory = memory_figures(result.lowered, search.best);
    result.schedule.memory->tensors = memory_ledger(result.lowered, search.best);
    text += "\n" +
            memory_report_text(*result.schedule.memory, run.mesh, run.options.lower.mode,
                               costs::policy_text(run.options.lower.precision, run.graph)) +
            loss_head_text(result.lowered, search.best);
  }
  return text;
}

// Writes --export-problem, --schedule and --solution, once the search has succeeded.
void write_outputs(const Flags& flags, const SynthResult& result, const std::string& export_text) {
  if (!flags.export_path.empty()) ir::write_file_atomic(flags.export_path, export_text);
  if (!flags.schedule_path.empty()) {
    ir::write_file_atomic(flags.schedule_path, ir::to_json(result.schedule).dump(2) + "\n");
  }
  if (!flags.solution_path.empty()) {
    ir::write_file_atomic(flags.solution_path, solution_to_iopddl(result.search.best).dump() + "\n");
  }
}

// The search: every step to the sinks, then the best plan and the files.
int run_search(const ModelRun& run, const std::optional<std::string>& dot_binary) {
  const Flags& flags = run.flags;
  std::string export_text;  // written with the other outputs, after the search
  if (!flags.export_path.empty()) {
    export_text = problem_to_iopddl(lower(run.graph, run.mesh, *run.model, run.options.lower).problem).dump() + "\n";
  }
  StepSinks sinks(run.out, run.log, flags.trace_path, trace_options(flags, run.model_name, run.model->unit()), flags.quiet);
  auto result = synthesize(run.graph, run.mesh, *run.model, run.options,
                           [&](const Lowered& lowered, const Iteration& it) { sinks.add(lowered, it); });
  sinks.finish();
  label_stop_reason(result.search);
  log_search(run, result);
  const std::string text = result_text(run, result);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  write_outputs(flags, result, export_text);
  write_pictures(flags, result, dot_binary, run.model->unit());
  return finish_search_run(flags);
}

}  // namespace

int run_model(const Flags& flags, const std::string& model_name) {
  ModelRun run{flags, model_name};
  make_loggers(run);
  std::optional<std::string> dot_binary;
  if (!flags.svg_path.empty() && !(dot_binary = find_dot_binary())) {
    throw ir::InputError("--svg needs Graphviz's dot on PATH (install the graphviz package, or write --dot FILE instead)");
  }
  std::vector<std::string> warnings;  // unknown ops kept replicated
  ir::ModelFlags model_flags = flags.model;
  model_flags.training = costs::parse_mode(flags.mode) == costs::Mode::training;  // the loss head is in the plan
  run.graph = ir::build_model(model_flags, model_name, &warnings);
  for (const auto& warning : warnings) run.log->warn("{}", warning);
  run.mesh = make_mesh(flags);
  run.model = costs::make_cost_model(flags.cost_model);
  run.options = synth_options(flags, run.graph, run.mesh);
  run.out->info("{}\n", ir::as_logged(ir::format_graph_table(run.graph)));
  if (flags.stages > 0) return run_stages(run);
  if (flags.plan == kRandomPlan) return run_random_plan(run);
  if (flags.evaluate) return run_evaluate(run);
  return run_search(run, dot_binary);
}

}  // namespace shardsynth::synth::cli
