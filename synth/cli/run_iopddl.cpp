// `synth --iopddl FILE`: a contest problem solved as a plain Problem, or
// with --verify, a solution file scored under the contest's rules.
#include <cstdio>

#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "synth/cli/runs.hpp"
#include "synth/cli/search_text.hpp"
#include "synth/solver/iopddl.hpp"
#include "synth/synthesizer.hpp"

namespace shardsynth::synth::cli {
namespace {

// `synth --iopddl FILE --verify SOLUTION`: the contest's evaluation of a
// solution file. Exit 0 when it is feasible, 1 when it is not.
int verify_solution(const Problem& problem, const std::string& path) {
  const auto solution = solution_from_iopddl(parse_json(ir::read_file(path), path), problem, path);
  const int64_t cost = cost_without_usage(problem, solution);
  if (cost >= kForbidden) {
    std::printf("%s: infeasible: it picks a forbidden strategy or pair\n", path.c_str());
    return 1;
  }
  if (!within_usage_limit(problem, solution)) {
    std::printf("%s: infeasible: over the usage limit %lld\n", path.c_str(), static_cast<long long>(*problem.usage_limit));
    return 1;
  }
  std::printf("%s: feasible, cost %lld\n", path.c_str(), static_cast<long long>(evaluate(problem, solution)));
  return 0;
}

}  // namespace

// `synth --iopddl FILE`: a contest problem, solved as a plain Problem.
int run_iopddl(const Flags& flags) {
  if (!flags.trace_path.empty() || !flags.dot_path.empty() || !flags.svg_path.empty()) {
    throw ir::InputError("--trace, --dot and --svg need a model, not --iopddl");
  }
  const Problem problem = load_iopddl(flags.iopddl);
  if (!flags.verify_path.empty()) {
    const int verdict = verify_solution(problem, flags.verify_path);
    if (!flags.export_path.empty()) ir::write_file_atomic(flags.export_path, problem_to_iopddl(problem).dump() + "\n");
    return verdict;
  }
  CegisResult search = solve_problem(problem, cegis_options(flags), [&](const Iteration& it) {
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
  if (!flags.export_path.empty()) ir::write_file_atomic(flags.export_path, problem_to_iopddl(problem).dump() + "\n");
  if (!flags.solution_path.empty() && !search.best.empty()) {
    ir::write_file_atomic(flags.solution_path, solution_to_iopddl(search.best).dump() + "\n");
  }
  return finish_search_run(flags);
}

}  // namespace shardsynth::synth::cli
