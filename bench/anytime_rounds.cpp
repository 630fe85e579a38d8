// `anytime_rounds` (bench tool, built with the tests): one Lagrangian search
// (lagrangian_search.hpp) on an IOPDDL contest file, for a fixed number of
// rounds and without a deadline, so that its plans depend on the seed alone:
// the A/B of a change to the search's moves on a loaded machine, where
// timed runs cannot tell 0.1% from the load. Prints the best cost (the
// folded constant included) and the seconds since the start every tenth of
// the rounds, with the search's Lagrangian lower bound.
//
//   anytime_rounds FILE.json.gz ROUNDS [--seed N] [--bnb-attempts N] [--region-attempts N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "synth/solver/folding.hpp"
#include "synth/solver/iopddl.hpp"
#include "synth/solver/lagrangian_search.hpp"

using namespace shardsynth::synth;

int main(int argc, char** argv) {
  CLI::App app{"anytime_rounds: one Lagrangian search for a fixed number of rounds"};
  std::string file;
  long rounds = 100;
  LagrangianOptions options;
  app.add_option("file", file, "IOPDDL contest file")->required();
  app.add_option("rounds", rounds, "rounds to run")->required()->check(CLI::PositiveNumber);
  app.add_option("--seed", options.seed, "the search's seed");
  app.add_option("--bnb-attempts", options.bnb_attempts, "branch-and-bound regions per application (0 = none)");
  app.add_option("--region-attempts", options.region_attempts, "Z3 regions per application (0 = none)");
  CLI11_PARSE(app, argc, argv);
  const auto begin = std::chrono::steady_clock::now();
  const FoldedProblem folded = fold_problem(load_iopddl(file));
  LagrangianSearch search(folded, options);
  int64_t best = kForbidden;
  const long step = std::max(1L, rounds / 10);
  while (search.rounds() < rounds && !search.finished()) {
    for (const auto& plan : search.run(std::min(step, rounds - search.rounds()))) best = std::min(best, plan.cost);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    std::printf("rounds %ld cost %lld bound %lld seconds %.1f\n", search.rounds(),
                static_cast<long long>(cost_add(best, folded.constant)),
                static_cast<long long>(cost_add(search.lower_bound(), folded.constant)), seconds);
    std::fflush(stdout);
  }
  return 0;
}
