// `synth`: shard a model graph over a device mesh, proving the plan optimal
// under the cost model. This file parses the command line and dispatches:
// flags.hpp declares the flags, runs.hpp the runs (a contest problem, a
// model), trace_subcommand.hpp `synth trace`.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "ir/model_cli.hpp"
#include "ir/version.hpp"
#include "synth/cli/flags.hpp"
#include "synth/cli/runs.hpp"
#include "synth/cli/trace_subcommand.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/time_guard.hpp"
#include "synth/synthesizer.hpp"

namespace {

using namespace shardsynth;

int run_main(int argc, char** argv) {
  CLI::App app{"synth: find the cheapest sharding of a model over a device mesh and prove it optimal", "synth"};
  synth::cli::Flags flags;
  synth::cli::add_flags(app, flags);
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
      return synth::cli::run_iopddl(flags);
    }
    return synth::cli::run_model(flags, ir::chosen_model(app, flags.model));
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
