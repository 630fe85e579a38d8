#include "synth/cli/trace_subcommand.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "ir/error.hpp"
#include "synth/report/trace_replay.hpp"

namespace shardsynth::synth {

namespace {

constexpr const char* kUsage =
    "usage: synth trace FILE.jsonl [--iter N]\n"
    "  re-prints step N of a trace written by `synth --trace FILE.jsonl` exactly as the run printed it,\n"
    "  or without --iter a summary of every step (bound asked, answer, cost, solver milliseconds)\n";

int64_t parse_iter(const std::string& text) {
  std::size_t used = 0;
  int64_t value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw ir::InputError("--iter '" + text + "' is not a step number");
  return value;
}

}  // namespace

int trace_command_main(const std::vector<std::string>& args) {
  try {
    std::string path;
    std::optional<int64_t> iter;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& arg = args[i];
      if (arg == "-h" || arg == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      }
      if (arg == "--iter") {
        if (i + 1 == args.size()) throw ir::InputError("--iter needs a step number");
        iter = parse_iter(args[++i]);
      } else if (arg.rfind("--iter=", 0) == 0) {
        iter = parse_iter(arg.substr(7));
      } else if (!arg.empty() && arg[0] == '-') {
        throw ir::InputError("trace: unknown option '" + arg + "' (known: --iter N)");
      } else if (path.empty()) {
        path = arg;
      } else {
        throw ir::InputError("trace takes one file, got '" + path + "' and '" + arg + "'");
      }
    }
    if (path.empty()) throw ir::InputError("trace needs a trace file (synth --trace FILE.jsonl writes one)");
    const TraceFile trace = read_trace(path);
    const std::string text = iter ? recorded_iteration(trace, *iter) : trace_summary(trace);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    return 0;
  } catch (const ir::InputError& e) {
    std::fprintf(stderr, "synth: error: %s\n", e.what());
    return 2;
  }
}

}  // namespace shardsynth::synth
