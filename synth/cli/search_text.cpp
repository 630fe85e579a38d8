#include "synth/cli/search_text.hpp"

#include <cstdio>
#include <cstdlib>

#include "synth/solver/interrupt.hpp"

namespace shardsynth::synth::cli {
namespace {

// The exit code of a search that ended normally: 130 after Ctrl-C.
int exit_code() { return interrupt_requested() ? 130 : 0; }

}  // namespace

// Sizes before and after the reductions, the bounds and the steps, for logs
// and bench/synth_bench.
std::string search_summary(const CegisResult& search) {
  auto size = [](const ProblemSize& s) {
    return std::to_string(s.nodes) + " nodes, " + std::to_string(s.edges) + " edges, " + std::to_string(s.strategies) + " strategies";
  };
  int checks = 0;
  for (const auto& it : search.iterations) checks += it.source.rfind("z3", 0) == 0;
  return "problem: " + size(search.original) + "; reduced: " + size(search.reduced) + "; pruned: " + size(search.pruned) +
         "; dual bound " + std::to_string(search.dual_bound) + "; lower bound " + std::to_string(search.lower_bound) + "; steps " +
         std::to_string(search.iterations.size()) + ", Z3 calls " + std::to_string(checks);
}

// One line per search step, for plain problems that have no graph to print.
std::string step_line(const Iteration& it) {
  std::string line = "step " + std::to_string(it.index) + " (" + it.source + (it.relaxed ? ", without the usage limit" : "") + "): ";
  if (it.bound) line += "below " + std::to_string(*it.bound) + ": ";
  if (it.status == CheckStatus::sat) {
    line += "cost " + std::to_string(it.cost);
  } else {
    line += it.status == CheckStatus::unsat ? "unsat" : "unknown";
  }
  char ms[64];
  std::snprintf(ms, sizeof ms, " [%.1f ms; prepared in %.1f ms]", it.solver_ms, it.prepare_ms);
  return line + ms;
}

// Names why an unproven search stopped: "interrupted (SIGINT)" once Ctrl-C
// was pressed, "memory limit" for Z3's memory limit, else Z3's own reason.
void label_stop_reason(CegisResult& search) {
  if (search.proven_optimal) return;
  if (interrupt_requested()) {
    search.stop_reason = "interrupted (SIGINT)";
  } else if (search.stop_reason.find("memout") != std::string::npos ||
             search.stop_reason.find("memory") != std::string::npos) {
    search.stop_reason = "memory limit";
  }
}

// "lower bound L, gap G%" of an unproven search.
std::string gap_text(const CegisResult& search) {
  char gap[64];
  std::snprintf(gap, sizeof gap, "%.4f%%", 100.0 * search.relative_gap());
  return "lower bound " + std::to_string(search.lower_bound) + ", gap " + gap;
}

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
std::string verdict(const CegisResult& search) {
  if (search.best.empty()) return "no feasible assignment found (" + search.stop_reason + ")";
  if (search.proven_optimal) return "cost " + std::to_string(search.best_cost) + ", proven optimal";
  return "cost " + std::to_string(search.best_cost) + ", NOT proven optimal (" + search.stop_reason + "): " + gap_text(search);
}

}  // namespace shardsynth::synth::cli
