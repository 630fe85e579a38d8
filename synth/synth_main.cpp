// `synth`: shard a model graph over a device mesh, proving the plan optimal
// under the cost model. A thin shell over synth::synthesize().
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "ir/graph_table.hpp"
#include "ir/models.hpp"
#include "ir/text_table.hpp"
#include "synth/iteration_table.hpp"
#include "synth/synthesizer.hpp"

namespace {

using namespace shardsynth;

struct Flags {
  std::string mesh = "8";           // --mesh
  std::string cost_model = "slapo"; // --cost-model
  std::string schedule_path;        // --schedule
  bool quiet = false;               // --quiet
  bool verbose = false;             // --verbose
  int max_iterations = 0;           // --max-iterations
  ir::MlpConfig mlp;                // mlp sizes
  std::string dtype = "float32";    // --dtype
};

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

  ir::MlpConfig config = flags.mlp;
  config.dtype = ir::parse_dtype(flags.dtype);
  const ir::Graph graph = ir::build_mlp(config);
  const ir::Mesh mesh = ir::parse_mesh(flags.mesh);
  const auto model = costs::make_cost_model(flags.cost_model);

  out->info("{}\n", ir::as_logged(ir::format_graph_table(graph)));
  synth::CegisOptions options;
  options.max_iterations = flags.max_iterations;
  auto result = synth::synthesize(graph, mesh, *model, options, [&](const synth::Lowered& lowered, const synth::Iteration& it) {
    out->info(synth::iteration_header(it.index));
    log->debug("solver call {}: {:.3f} ms", it.index, it.solver_ms);
    if (it.status == synth::CheckStatus::sat) {
      out->info(synth::model_text(lowered, it.assignment));
      out->info("{}\n", ir::as_logged(synth::format_iteration_table(lowered, it.assignment)));
    } else if (it.status == synth::CheckStatus::unsat) {
      out->info("Cannot find better solutions");
    }
  });
  (void)model_name;

  const auto& search = result.search;
  log->info("{} model: cost {} {} after {} solver calls{}", flags.cost_model, search.best_cost, model->unit(),
            search.iterations.size(), search.proven_optimal ? ", proven optimal" : " (" + search.stop_reason + ")");
  std::string text = search.proven_optimal ? "\nBest solution:\n"
                                           : "\nBest solution (not proven optimal: " + search.stop_reason + "):\n";
  if (flags.quiet) text.clear();
  text += ir::directives_text(result.schedule);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  if (!flags.schedule_path.empty()) {
    ir::write_file_atomic(flags.schedule_path, ir::to_json(result.schedule).dump(2) + "\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"synth: find the cheapest sharding of a model over a device mesh and prove it optimal", "synth"};
  Flags flags;
  app.add_option("--mesh", flags.mesh, "device mesh: 8 (1-D) or 2x4 (2-D)")->capture_default_str();
  app.add_option("--cost-model", flags.cost_model, "cost model preset: slapo (the PR's volume model)")
      ->capture_default_str();
  app.add_option("--schedule", flags.schedule_path, "also write the schedule as JSON to this file");
  app.add_option("--max-iterations", flags.max_iterations, "stop after this many solver calls (0: until proven)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--quiet,-q", flags.quiet, "print only the directives");
  app.add_flag("--verbose,-v", flags.verbose, "log solver timings to stderr");
  app.require_subcommand(1);
  app.fallthrough();

  auto* mlp = app.add_subcommand("mlp", "the built-in two-layer MLP: x -> fc1 -> gelu -> fc2");
  mlp->add_option("--batch", flags.mlp.batch, "batch size (x dim 0)")->capture_default_str();
  mlp->add_option("--seq", flags.mlp.seq, "sequence length (x dim 1)")->capture_default_str();
  mlp->add_option("--hidden", flags.mlp.hidden, "hidden size (x dim 2)")->capture_default_str();
  mlp->add_option("--ffn", flags.mlp.ffn, "fc1 output size")->capture_default_str();
  mlp->add_option("--dtype", flags.dtype, "element type: float32, float16, bfloat16")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "synth: error: %s\n", e.what());
    return 2;
  }
  try {
    return run(flags, app.get_subcommands().front()->get_name());
  } catch (const ir::InputError& e) {
    std::fprintf(stderr, "synth: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synth: internal error: %s\n", e.what());
    return 1;
  }
}
