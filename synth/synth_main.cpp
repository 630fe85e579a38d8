// `synth`: shard a model graph over a device mesh, proving the plan optimal
// under the cost model. A thin shell over synth::synthesize().
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/json_field.hpp"
#include "ir/file_io.hpp"
#include "ir/graph_table.hpp"
#include "ir/cli_numbers.hpp"
#include "ir/model_cli.hpp"
#include "ir/version.hpp"
#include "ir/text_table.hpp"
#include "ir/schedule.hpp"
#include "synth/memory_figures.hpp"
#include "synth/memory_ledger.hpp"
#include "synth/plans.hpp"
#include "synth/report/cost_plot.hpp"
#include "synth/report/graphviz.hpp"
#include "synth/report/iteration_table.hpp"
#include "synth/report/memory_plot.hpp"
#include "synth/report/memory_report.hpp"
#include "synth/report/progress_line.hpp"
#include "synth/report/trace_command.hpp"
#include "synth/report/trace_jsonl.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/iopddl.hpp"
#include "synth/solver/time_guard.hpp"
#include "synth/stages/stage_report.hpp"
#include "synth/stages/stages.hpp"
#include "synth/synthesizer.hpp"

namespace {

using namespace shardsynth;

struct Flags {
  std::string mesh = "8";                // --mesh
  std::string mesh_file;                 // --mesh-file
  std::string bandwidth;                 // --bandwidth, GB/s per axis
  std::string latency;                   // --latency, us per axis
  double peak_tflops = 0;                // --peak-tflops; 0 = the mesh default
  std::string cost_model = "alpha-beta"; // --cost-model
  std::string mode = "inference";        // --mode
  int64_t memory = 0;                    // --memory, bytes per device (above 0); 0 = not given, no budget
  bool memory_report = false;            // --memory-report: the plan's memory per device, printed and in the schedule
  bool no_recompute = false;             // --no-recompute: save every training activation for the backward
  bool no_family_starts = false;         // --no-family-starts: under a budget, search without the families' plans first
  std::string schedule_path;             // --schedule
  bool quiet = false;                    // --quiet
  bool verbose = false;                  // --verbose
  int max_iterations = 0;                // --max-iterations
  std::string strategy = "bisect";       // --strategy
  bool no_reduce = false;                // --no-reduce
  ir::ModelFlags model;                  // the model subcommand's flags
  std::string plan;                      // --plan: a built-in plan family
  std::string iopddl;                    // --iopddl: solve this contest problem instead of a model
  std::string solution_path;             // --solution: write the best assignment in contest format
  std::string export_path;               // --export-problem: write the problem in contest format
  std::string verify_path;               // --verify: score this contest solution instead of searching
  double time_limit = 0;                 // --time-limit, seconds; 0 = none
  int64_t memory_limit_mb = 0;           // --memory-limit, megabytes of Z3 memory; 0 = none
  std::string encoding = "pseudo-boolean";  // --encoding
  std::string probes = "assumptions";    // --probes
  bool no_dual = false;                  // --no-dual
  bool no_lp = false;                    // --no-lp
  bool relax = false;                    // --relax-usage
  int threads = 0;                       // --threads: anytime searches side by side; 0 = one per core
  int64_t seed = 1;                      // --seed: the anytime search's first seed
  std::string anytime = "auto";          // --anytime: auto, always or never
  std::vector<std::string> pins;         // --pin TENSOR=SPEC (or TENSOR!=SPEC)
  std::vector<std::string> forbids;      // --forbid TENSOR=SPEC
  bool evaluate = false;                 // `synth evaluate ...`: score --schedule instead of searching
  std::string trace_path;                // --trace: write the search as JSON lines (docs/trace_jsonl.md)
  std::string dot_path;                  // --dot: write the plan as a Graphviz digraph
  std::string svg_path;                  // --svg: render the plan (and the cost and memory plots beside it) with dot
  int stages = 0;                        // --stages: pipeline stages (mesh axis 0); 0 = no pipeline
  std::string stage_balance = "cost";    // --stage-balance: params or cost
  int micro_batches = 1;                 // --micro-batches, for the pipeline time
};

// The run's options as recorded in a trace's header.
nlohmann::json trace_options(const Flags& flags, const std::string& model_name, const std::string& unit) {
  return {{"model", model_name == "graph" ? flags.model.graph_path : model_name},
          {"mesh", flags.mesh_file.empty() ? flags.mesh : flags.mesh_file},
          {"cost_model", flags.cost_model}, {"unit", unit}, {"mode", flags.mode}, {"memory", flags.memory},
          {"strategy", flags.strategy}, {"encoding", flags.encoding}, {"plan", flags.plan},
          {"pins", flags.pins}, {"forbids", flags.forbids}};
}

// --dot and --svg: the plan as a digraph, rendered, and the cost and memory plots beside it.
void write_pictures(const Flags& flags, const synth::SynthResult& result, const std::optional<std::string>& dot_binary,
                    const std::string& unit) {
  if (flags.dot_path.empty() && flags.svg_path.empty()) return;
  const std::string dot = synth::plan_dot(result.lowered, result.search.best);
  if (!flags.dot_path.empty()) ir::write_file_atomic(flags.dot_path, dot);
  if (flags.svg_path.empty()) return;
  const std::string graph_svg = synth::render_svg(*dot_binary, dot);
  ir::write_file_atomic(flags.svg_path, graph_svg);
  ir::write_file_atomic(synth::cost_plot_path(flags.svg_path),
                        synth::cost_plot_svg(synth::plot_steps(result.search.iterations), unit));
  ir::write_file_atomic(synth::memory_plot_path(flags.svg_path),
                        synth::memory_plot_svg(synth::memory_plot(result.lowered, result.search.best)));
}

ir::Mesh make_mesh(const Flags& flags) {
  ir::Mesh mesh = flags.mesh_file.empty() ? ir::parse_mesh(flags.mesh)
                                          : ir::mesh_from_json(ir::read_file(flags.mesh_file), flags.mesh_file);
  ir::set_links(mesh, flags.bandwidth, flags.latency);
  if (flags.peak_tflops > 0) mesh.peak_tflops = flags.peak_tflops;
  return mesh;
}

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ir::InputError(where + ": not valid JSON (" + ir::json_parse_failure(e) + ")");
  }
}

// When the process started (static initialization), for --time-limit.
const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

synth::CegisOptions cegis_options(const Flags& flags) {
  synth::CegisOptions options;
  options.max_iterations = flags.max_iterations;
  options.reduce = !flags.no_reduce;
  options.dual_bound = !flags.no_dual;
  options.lp_bound = !flags.no_lp;
  options.relax_usage = flags.relax;
  if (flags.time_limit > 0) {
    // The limit counts from the start of the process: loading and lowering
    // are inside it, and 1% of it (at least a fifth of a second) is kept for
    // writing the outputs and leaving: Llama 3 70B on 8x8 printed its plan
    // 0.24 s after a 120 s deadline and the kernel took 0.5 s more to unmap
    // the 3.8 GB Z3 had grown (a search that Z3 keeps past its deadline is
    // abandoned a little later: time_guard.hpp).
    const double reserve = std::max(0.2, 0.01 * flags.time_limit);
    options.deadline = kProcessStart + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                           std::chrono::duration<double>(std::max(0.01, flags.time_limit - reserve)));
  }
  options.threads = flags.threads > 0 ? flags.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.seed = static_cast<uint64_t>(flags.seed);
  if (flags.anytime == "auto") {
    options.anytime = synth::AnytimeMode::automatic;
  } else if (flags.anytime == "always") {
    options.anytime = synth::AnytimeMode::always;
  } else if (flags.anytime == "never") {
    options.anytime = synth::AnytimeMode::never;
  } else {
    throw ir::InputError("unknown --anytime '" + flags.anytime + "' (known: auto, always, never)");
  }
  if (flags.strategy == "bisect") {
    options.strategy = synth::SearchStrategy::bisect;
  } else if (flags.strategy == "optimize") {
    options.strategy = synth::SearchStrategy::optimize;
  } else if (flags.strategy == "descent") {
    options.strategy = synth::SearchStrategy::descent;
  } else {
    throw ir::InputError("unknown strategy '" + flags.strategy + "' (known: descent, bisect, optimize)");
  }
  if (flags.encoding == "one-hot") {
    options.encoding = synth::EncodingKind::one_hot;
  } else if (flags.encoding == "pseudo-boolean") {
    options.encoding = synth::EncodingKind::pseudo_boolean;
  } else if (flags.encoding == "if-chains") {
    options.encoding = synth::EncodingKind::if_chains;
  } else {
    throw ir::InputError("unknown encoding '" + flags.encoding + "' (known: if-chains, one-hot, pseudo-boolean)");
  }
  if (flags.probes == "push-pop") {
    options.probes = synth::ProbeMode::push_pop;
  } else if (flags.probes != "assumptions") {
    throw ir::InputError("unknown probe mode '" + flags.probes + "' (known: assumptions, push-pop)");
  }
  return options;
}

// Sizes before and after the reductions, the bounds and the steps, for logs
// and bench/synth_bench.
std::string search_summary(const synth::CegisResult& search) {
  auto size = [](const synth::ProblemSize& s) {
    return std::to_string(s.nodes) + " nodes, " + std::to_string(s.edges) + " edges, " + std::to_string(s.strategies) + " strategies";
  };
  int checks = 0;
  for (const auto& it : search.iterations) checks += it.source.rfind("z3", 0) == 0;
  return "problem: " + size(search.original) + "; reduced: " + size(search.reduced) + "; pruned: " + size(search.pruned) +
         "; dual bound " + std::to_string(search.dual_bound) + "; lower bound " + std::to_string(search.lower_bound) + "; steps " +
         std::to_string(search.iterations.size()) + ", Z3 calls " + std::to_string(checks);
}

// One line per search step, for plain problems that have no graph to print.
std::string step_line(const synth::Iteration& it) {
  std::string line = "step " + std::to_string(it.index) + " (" + it.source + (it.relaxed ? ", without the usage limit" : "") + "): ";
  if (it.bound) line += "below " + std::to_string(*it.bound) + ": ";
  if (it.status == synth::CheckStatus::sat) {
    line += "cost " + std::to_string(it.cost);
  } else {
    line += it.status == synth::CheckStatus::unsat ? "unsat" : "unknown";
  }
  char ms[64];
  std::snprintf(ms, sizeof ms, " [%.1f ms; prepared in %.1f ms]", it.solver_ms, it.prepare_ms);
  return line + ms;
}

// Names why an unproven search stopped: "interrupted (SIGINT)" once Ctrl-C
// was pressed, "memory limit" for Z3's memory limit, else Z3's own reason.
void label_stop_reason(synth::CegisResult& search) {
  if (search.proven_optimal) return;
  if (synth::interrupt_requested()) {
    search.stop_reason = "interrupted (SIGINT)";
  } else if (search.stop_reason.find("memout") != std::string::npos ||
             search.stop_reason.find("memory") != std::string::npos) {
    search.stop_reason = "memory limit";
  }
}

// "lower bound L, gap G%" of an unproven search.
std::string gap_text(const synth::CegisResult& search) {
  char gap[64];
  std::snprintf(gap, sizeof gap, "%.4f%%", 100.0 * search.relative_gap());
  return "lower bound " + std::to_string(search.lower_bound) + ", gap " + gap;
}

// The exit code of a search that ended normally: 130 after Ctrl-C.
int exit_code() { return synth::interrupt_requested() ? 130 : 0; }

// The end of a search run whose outputs are all written. Under --time-limit
// the process leaves at once, without tearing down the search's state: on
// Llama 3 70B (2,405 problem nodes on 8x8) that teardown took 0.7 s after the
// last output, past the limit the user asked for.
int finish_search_run(const Flags& flags) {
  const int code = exit_code();
  if (flags.time_limit > 0) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}

// The summary line: the cost, and either the proof or the labelled gap.
std::string verdict(const synth::CegisResult& search) {
  if (search.best.empty()) return "no feasible assignment found (" + search.stop_reason + ")";
  if (search.proven_optimal) return "cost " + std::to_string(search.best_cost) + ", proven optimal";
  return "cost " + std::to_string(search.best_cost) + ", NOT proven optimal (" + search.stop_reason + "): " + gap_text(search);
}

// `synth --iopddl FILE --verify SOLUTION`: the contest's evaluation of a
// solution file. Exit 0 when it is feasible, 1 when it is not.
int verify_solution(const synth::Problem& problem, const std::string& path) {
  const auto solution = synth::solution_from_iopddl(parse_json(ir::read_file(path), path), problem, path);
  const int64_t cost = synth::cost_without_usage(problem, solution);
  if (cost >= synth::kForbidden) {
    std::printf("%s: infeasible: it picks a forbidden strategy or pair\n", path.c_str());
    return 1;
  }
  if (!synth::within_usage_limit(problem, solution)) {
    std::printf("%s: infeasible: over the usage limit %lld\n", path.c_str(), static_cast<long long>(*problem.usage_limit));
    return 1;
  }
  std::printf("%s: feasible, cost %lld\n", path.c_str(), static_cast<long long>(synth::evaluate(problem, solution)));
  return 0;
}

// `synth --iopddl FILE`: a contest problem, solved as a plain Problem.
int run_iopddl(const Flags& flags) {
  if (!flags.trace_path.empty() || !flags.dot_path.empty() || !flags.svg_path.empty()) {
    throw ir::InputError("--trace, --dot and --svg need a model, not --iopddl");
  }
  const synth::Problem problem = synth::load_iopddl(flags.iopddl);
  if (!flags.verify_path.empty()) {
    const int verdict = verify_solution(problem, flags.verify_path);
    if (!flags.export_path.empty()) ir::write_file_atomic(flags.export_path, synth::problem_to_iopddl(problem).dump() + "\n");
    return verdict;
  }
  synth::CegisResult search = synth::solve_problem(problem, cegis_options(flags), [&](const synth::Iteration& it) {
    if (!flags.quiet) {
      std::puts(step_line(it).c_str());
      std::fflush(stdout);
    }
  });
  label_stop_reason(search);
  if (flags.verbose) std::fprintf(stderr, "[debug] %s\n", search_summary(search).c_str());
  std::printf("%s: %s\n", problem.name.c_str(), verdict(search).c_str());
  std::fflush(stdout);
  // Outputs are written only once the search has succeeded, so a bad input
  // found on the way leaves none of them behind.
  if (!flags.export_path.empty()) ir::write_file_atomic(flags.export_path, synth::problem_to_iopddl(problem).dump() + "\n");
  if (!flags.solution_path.empty() && !search.best.empty()) {
    ir::write_file_atomic(flags.solution_path, synth::solution_to_iopddl(search.best).dump() + "\n");
  }
  return finish_search_run(flags);
}

// `synth MODEL --plan random --seed N`: one seeded random legal plan, scored
// and written like a searched one; its table (unless --quiet), its cost and
// its directives on stdout.
int run_random_plan(const Flags& flags, const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                    const synth::SynthOptions& options) {
  if (!flags.trace_path.empty() || !flags.dot_path.empty() || !flags.svg_path.empty() || !flags.export_path.empty()) {
    throw ir::InputError("--plan random writes --schedule and --solution only (not --trace, --dot, --svg, --export-problem)");
  }
  const auto result = synth::random_plan(graph, mesh, model, options, static_cast<uint64_t>(flags.seed));
  std::string text;
  if (!flags.quiet) {
    text = synth::format_iteration_table(result.lowered, result.search.best) + "\nRandom plan (seed " +
           std::to_string(flags.seed) + "): cost " + std::to_string(result.search.best_cost) + " " + model.unit() + "\n";
  }
  text += ir::directives_text(result.schedule);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (!flags.schedule_path.empty()) ir::write_file_atomic(flags.schedule_path, ir::to_json(result.schedule).dump(2) + "\n");
  if (!flags.solution_path.empty()) {
    ir::write_file_atomic(flags.solution_path, synth::solution_to_iopddl(result.search.best).dump() + "\n");
  }
  return 0;
}

int run(const Flags& flags, const std::string& model_name) {
  // Tables go to stdout exactly as the PR lays them out; diagnostics go to stderr.
  auto out = spdlog::stdout_logger_st("synth.out");
  out->set_pattern("%v");
  auto log = spdlog::stderr_logger_st("synth.log");
  log->set_pattern("[%l] %v");
  if (flags.quiet) {
    out->set_level(spdlog::level::warn);
    log->set_level(spdlog::level::warn);
  } else if (flags.verbose) {
    log->set_level(spdlog::level::debug);
  }

  std::optional<std::string> dot_binary;
  if (!flags.svg_path.empty() && !(dot_binary = synth::find_dot_binary())) {
    throw ir::InputError("--svg needs Graphviz's dot on PATH (install the graphviz package, or write --dot FILE instead)");
  }
  std::vector<std::string> warnings;  // unknown ops kept replicated
  const ir::Graph graph = ir::build_model(flags.model, model_name, &warnings);
  for (const auto& warning : warnings) log->warn("{}", warning);
  const ir::Mesh mesh = make_mesh(flags);
  const auto model = costs::make_cost_model(flags.cost_model);
  synth::SynthOptions options;
  options.lower.mode = costs::parse_mode(flags.mode);
  if (flags.memory > 0) options.lower.memory_budget = flags.memory;
  options.lower.recompute = !flags.no_recompute;
  options.family_starts = !flags.no_family_starts;
  options.cegis = cegis_options(flags);
  for (const auto& text : flags.pins) options.pins.push_back(synth::parse_pin(text));
  for (const auto& text : flags.forbids) {
    synth::Pin pin = synth::parse_pin(text);
    pin.kind = synth::PinKind::forbid;
    options.pins.push_back(pin);
  }
  const bool random_plan = flags.plan == synth::kRandomPlan;
  if (!flags.plan.empty() && !random_plan) options.lower.allow = synth::plan_filter(flags.plan, graph, mesh);

  out->info("{}\n", ir::as_logged(ir::format_graph_table(graph)));
  if (flags.stages > 0) {  // pipeline stages: see synth/stages.hpp
    if (flags.evaluate || !flags.export_path.empty() || !flags.solution_path.empty()) {
      throw ir::InputError("--stages cannot be combined with evaluate, --export-problem or --solution");
    }
    const synth::StageOptions stage_options{flags.stages, synth::parse_stage_balance(flags.stage_balance), flags.micro_batches};
    const auto plan = synth::plan_stage_layout(graph, mesh, *model, options, stage_options);
    log->debug("stage ranges: {} asked, {} solved, {} reused", plan.cache.ranges, plan.cache.solved, plan.cache.reused);
    std::fputs(synth::stage_report(plan, model->unit()).c_str(), stdout);
    std::fflush(stdout);
    if (!flags.schedule_path.empty()) ir::write_file_atomic(flags.schedule_path, ir::to_json(plan.schedule).dump(2) + "\n");
    return 0;
  }
  if (random_plan) {
    if (flags.evaluate) throw ir::InputError("--plan random cannot be combined with evaluate");
    return run_random_plan(flags, graph, mesh, *model, options);
  }
  if (flags.evaluate) {
    if (flags.schedule_path.empty()) throw ir::InputError("evaluate needs --schedule FILE");
    const auto schedule =
        ir::schedule_from_json(parse_json(ir::read_file(flags.schedule_path), flags.schedule_path), flags.schedule_path);
    const auto result = [&] {
      try {
        return synth::evaluate_schedule(graph, mesh, *model, options, schedule);
      } catch (const ir::InputError& e) {
        throw ir::InputError(flags.schedule_path + ": " + e.what());
      }
    }();
    out->info("{}\n", ir::as_logged(synth::format_iteration_table(result.lowered, result.search.best)));
    std::fputs(("Schedule cost: " + std::to_string(result.search.best_cost) + " " + model->unit() + "\n").c_str(), stdout);
    return 0;
  }
  std::string export_text;  // written with the other outputs, after the search
  if (!flags.export_path.empty()) {
    const synth::Lowered lowered = synth::lower(graph, mesh, *model, options.lower);
    export_text = synth::problem_to_iopddl(lowered.problem).dump() + "\n";
  }
  std::optional<synth::JsonlTraceWriter> trace;
  if (!flags.trace_path.empty()) trace.emplace(flags.trace_path, trace_options(flags, model_name, model->unit()));
  auto progress = synth::ProgressLine::for_stderr(flags.quiet);
  std::optional<int64_t> best_seen;
  auto result = synth::synthesize(graph, mesh, *model, options, [&](const synth::Lowered& lowered, const synth::Iteration& it) {
    progress.clear();
    // The block `synth trace FILE --iter N` re-prints from the trace.
    std::string block = synth::iteration_block(synth::problem_labels(lowered), synth::iteration_to_json(lowered, it), best_seen);
    block.pop_back();
    out->info("{}", block);
    log->debug("solver call {}: {} below {}: {:.3f} ms (prepared in {:.3f} ms)", it.index, synth::status_name(it.status),
               it.bound ? std::to_string(*it.bound) : "any", it.solver_ms, it.prepare_ms);
    if (it.status == synth::CheckStatus::sat) best_seen = it.cost;
    if (trace) trace->add(lowered, it);
    progress.update(it);
  });
  progress.clear();
  if (trace) trace->finish();

  label_stop_reason(result.search);
  const auto& search = result.search;
  log->debug("{}", search_summary(search));
  const synth::UsagePeak peak = synth::peak_usage(result.lowered.problem, search.best);
  log->info("memory per device: {} bytes at its peak, time step {} (parameters{} and live activations)", peak.bytes,
            peak.step, options.lower.mode == costs::Mode::training ? ", gradients, Adam state, gathered copies" : "");
  const auto z3_calls = std::count_if(search.iterations.begin(), search.iterations.end(),
                                      [](const synth::Iteration& it) { return it.source.rfind("z3", 0) == 0; });
  log->info("{} model, {}{}: cost {} {} after {} solver calls{}", flags.cost_model, flags.mode,
            flags.plan.empty() ? "" : ", " + flags.plan + " plans only", search.best_cost, model->unit(), z3_calls,
            search.proven_optimal ? ", proven optimal" : " (" + search.stop_reason + ")");
  std::string text = search.proven_optimal ? "\nBest solution:\n"
                                           : "\nBest solution (not proven optimal: " + search.stop_reason + "; " +
                                                 gap_text(search) + "):\n";
  if (flags.quiet) text.clear();
  text += ir::directives_text(result.schedule);
  if (flags.memory_report) {
    result.schedule.memory = synth::memory_figures(result.lowered, search.best);
    result.schedule.memory->tensors = synth::memory_ledger(result.lowered, search.best);
    text += "\n" + synth::memory_report_text(*result.schedule.memory, mesh, options.lower.mode);
  }

  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (!flags.export_path.empty()) ir::write_file_atomic(flags.export_path, export_text);
  if (!flags.schedule_path.empty()) {
    ir::write_file_atomic(flags.schedule_path, ir::to_json(result.schedule).dump(2) + "\n");
  }
  if (!flags.solution_path.empty()) {
    ir::write_file_atomic(flags.solution_path, synth::solution_to_iopddl(search.best).dump() + "\n");
  }
  write_pictures(flags, result, dot_binary, model->unit());
  return finish_search_run(flags);
}

void add_common_options(CLI::App& app, Flags& flags) {
  app.add_option("--mesh", flags.mesh, "device mesh: 8 (1-D) or 2x4 (2-D; axis 0 crosses nodes)")->capture_default_str();
  app.add_option("--mesh-file", flags.mesh_file, "read the mesh (shape, links, peak, memory) from this JSON file");
  app.add_option("--bandwidth", flags.bandwidth, "link bandwidth per mesh axis in GB/s, e.g. 25,200");
  app.add_option("--latency", flags.latency, "latency per ring step per mesh axis in microseconds, e.g. 5,1");
  app.add_option("--peak-tflops", flags.peak_tflops, "per-device peak TFLOP/s (default 312)")->check(ir::positive_number());
  app.add_option("--cost-model", flags.cost_model, "alpha-beta (nanoseconds) or slapo (the PR's volume model)")
      ->capture_default_str();
  app.add_option("--mode", flags.mode, "inference or training")->capture_default_str();
  app.add_option("--memory", flags.memory, "per-device memory budget in bytes (above 0; default: none)")
      ->check(ir::positive_number());
  app.add_flag("--memory-report", flags.memory_report,
               "print the plan's memory per device (parameters, gradients, optimizer state, activations, peak) and add "
               "it to the schedule");
  app.add_flag("--no-recompute", flags.no_recompute,
               "training under --memory: save every activation for the backward instead of letting the solver "
               "recompute some (the plan's sch[...].checkpoint() directives)");
  app.add_flag("--no-family-starts", flags.no_family_starts,
               "under --memory without --plan: search for the optimum directly, without first searching each plan "
               "family briefly and starting from the cheapest family plan");
  app.add_option("--schedule", flags.schedule_path,
                 "write the schedule as JSON to this file (with `synth evaluate`: read the schedule to score)");
  app.add_option("--plan", flags.plan,
                 "restrict the search to a plan family (data-parallel, zero1, fsdp, megatron, megatron-fsdp), or draw one random legal plan (random, with --seed)");
  app.add_option("--pin", flags.pins, "fix a tensor's spec: fc1.weight=SR (repeatable; TENSOR!=SPEC forbids)");
  app.add_option("--forbid", flags.forbids, "forbid a spec for a tensor: output=SR (repeatable)");
  app.add_option("--max-iterations", flags.max_iterations, "stop after this many solver calls (0: until proven)")
      ->check(ir::non_negative_number());
  app.add_option("--strategy", flags.strategy,
                 "descent (the PR's: cheaper than best), bisect (halve the gap to the lower bound) or optimize (z3::optimize)")
      ->capture_default_str();
  app.add_flag("--no-reduce", flags.no_reduce, "hand Z3 the whole problem, without the exact reductions");
  app.add_flag("--no-dual", flags.no_dual, "no lower-bound pass: no decoded first incumbent, no pruning at the gap");
  app.add_flag("--no-lp", flags.no_lp, "no LP relaxation: no LP bound, no LP-rounded plan, no reduced-cost fixing");
  app.add_flag("--relax-usage", flags.relax, "with a usage limit, first solve without it (its optimum is kept when it fits)");
  app.add_option("--threads", flags.threads, "anytime searches run side by side, one thread each (0: one per core)")
      ->check(ir::non_negative_number());
  app.add_option("--seed", flags.seed,
                 "the anytime search's first seed (the same seed and --threads give the same plans); with --plan random, the plan's seed")
      ->check(ir::non_negative_number());
  app.add_option("--anytime", flags.anytime,
                 "run the anytime search (folding, Lagrangian search, Z3 on regions) before the exact loop: auto (with a usage limit), always or never")
      ->capture_default_str();
  app.add_option("--time-limit", flags.time_limit, "stop after this many seconds with the best plan so far, its lower bound and gap (0: no limit)")
      ->check(ir::non_negative_number());
  app.add_option("--memory-limit", flags.memory_limit_mb,
                 "Z3 memory limit in MB: past it the search stops with the best plan so far, its lower bound and gap (0: none)")
      ->check(ir::non_negative_number());
  app.add_option("--encoding", flags.encoding, "Z3 encoding: if-chains (Int per node) or one-hot (Bool per strategy)")
      ->capture_default_str();
  app.add_option("--probes", flags.probes, "how bisection probes are withdrawn: assumptions or push-pop")->capture_default_str();
  app.add_option("--iopddl", flags.iopddl, "solve this IOPDDL contest problem (.json or .json.gz) instead of a model");
  app.add_option("--solution", flags.solution_path, "write the best assignment in the contest's format to this file");
  app.add_option("--export-problem", flags.export_path, "write the problem in the IOPDDL contest format to this file");
  app.add_option("--verify", flags.verify_path, "with --iopddl: score this solution file under the contest's rules instead of searching");
  app.add_option("--trace", flags.trace_path, "write every search step as JSON lines to this file (re-print: synth trace FILE)");
  app.add_option("--dot", flags.dot_path, "write the plan as a Graphviz digraph to this file");
  app.add_option("--svg", flags.svg_path, "render the plan with Graphviz's dot to this SVG file, the cost plot to <name>.cost.svg and the "
                 "memory per time step, with the budget, to <name>.memory.svg");
  app.add_option("--stages", flags.stages, "pipeline stages S, one per group of mesh axis 0 (--mesh 4x2 --stages 4: 4 stages of 2 devices)")
      ->check(ir::positive_number());
  app.add_option("--stage-balance", flags.stage_balance, "with --stages: cost (exact DP) or params (fairscale's rule)")
      ->capture_default_str();
  app.add_option("--micro-batches", flags.micro_batches, "with --stages: micro-batches M for the pipeline time")
      ->check(ir::positive_number())->capture_default_str();
  app.add_flag("--quiet,-q", flags.quiet, "print only the directives");
  app.add_flag("--verbose,-v", flags.verbose, "log solver timings to stderr");
}

int run_main(int argc, char** argv) {
  CLI::App app{"synth: find the cheapest sharding of a model over a device mesh and prove it optimal", "synth"};
  Flags flags;
  add_common_options(app, flags);
  app.footer("synth trace FILE.jsonl [--iter N]: re-print a search recorded with --trace (docs/trace_jsonl.md)");
  app.require_subcommand(0, 1);
  app.fallthrough();
  app.set_version_flag("--version", ir::version_line("synth"), "print the version and the git commit of this build");

  ir::add_model_subcommands(app, flags.model);
  ir::add_graph_option(app, flags.model);

  // `synth trace FILE.jsonl [--iter N]` re-prints a recorded search.
  if (argc > 1 && std::string(argv[1]) == "trace") return synth::trace_command_main({argv + 2, argv + argc});
  // `synth evaluate MODEL ... --schedule FILE` scores a saved plan.
  std::vector<char*> args(argv, argv + argc);
  if (args.size() > 1 && std::string(args[1]) == "evaluate") {
    flags.evaluate = true;
    args.erase(args.begin() + 1);
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "synth: error: %s\n", e.what());
    return 2;
  }
  try {
    // Every output path is checked before any work, so a bad one fails at
    // once and no other output is written beside it.
    for (const std::string* path : {&flags.schedule_path, &flags.solution_path, &flags.export_path, &flags.trace_path,
                                    &flags.dot_path, &flags.svg_path}) {
      if (!path->empty() && !(flags.evaluate && path == &flags.schedule_path)) ir::check_writable(*path);
    }
    // Ctrl-C ends the search with the best plan so far (exit 130); a second one stops at once.
    synth::install_sigint_handler();
    if (flags.memory_limit_mb > 0) synth::set_memory_limit_mb(flags.memory_limit_mb);
    if (!flags.iopddl.empty()) {
      if (!app.get_subcommands().empty() || !flags.model.graph_path.empty()) {
        throw ir::InputError("--iopddl takes no model subcommand or graph file");
      }
      return run_iopddl(flags);
    }
    return run(flags, ir::chosen_model(app, flags.model));
  } catch (const ir::InputError& e) {
    std::fprintf(stderr, "synth: error: %s\n", e.what());
    return 2;
  } catch (const synth::NoPlanError& e) {
    std::fprintf(stderr, "synth: %s\n", e.what());
    return synth::interrupt_requested() ? 130 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synth: internal error: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int code = run_main(argc, argv);
  if (synth::abandoned_searches() > 0) {
    // A search left running in Z3 past the time limit (time_guard.hpp):
    // leave without static destructors, which could run beside it.
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}
