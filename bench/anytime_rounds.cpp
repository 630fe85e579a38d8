// `anytime_rounds` (bench tool, built with the tests): Lagrangian searches
// (lagrangian_search.hpp) on an IOPDDL contest file, for a fixed number of
// rounds and without a deadline, so that the plans depend on the seed (and
// the number of searches) alone: the A/B of a change to the search on a
// loaded machine, where timed runs cannot tell 0.1% from the load.
//
// Without --threads: one search; prints the best cost (the folded constant
// included) and the seconds since the start every tenth of the rounds,
// with the search's Lagrangian lower bound.
//
// With --threads N: the whole anytime search (anytime.hpp) with N searches
// in epochs, as synth runs it on a problem this size (the memory dual on
// kernels up to 4,000 nodes, its 8 steps per epoch), each search stopping
// after ROUNDS rounds (AnytimeOptions::max_rounds); prints the best cost
// reached by every tenth of the rounds, then the rounds run over all
// searches and the seconds. This measures the exchange between searches.
//
//   anytime_rounds FILE.json.gz ROUNDS [--seed N] [--bnb-attempts N] [--region-attempts N]
//                  [--threads N [--epoch-rounds N] [--adopt-after N] [--relink-every N]
//                  [--searches N] [--keep-after N] [--restart-after N] [--lead-epochs N]]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "synth/solver/anytime.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/iopddl.hpp"
#include "synth/solver/lagrangian_search.hpp"

using namespace shardsynth::synth;

namespace {

double seconds_since(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

void run_one_search(const std::string& file, long rounds, const LagrangianOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  const FoldedProblem folded = fold_problem(load_iopddl(file));
  LagrangianSearch search(folded, options);
  int64_t best = kForbidden;
  const long step = std::max(1L, rounds / 10);
  while (search.rounds() < rounds && !search.finished()) {
    for (const auto& plan : search.run(std::min(step, rounds - search.rounds()))) best = std::min(best, plan.cost);
    std::printf("rounds %ld cost %lld bound %lld seconds %.1f\n", search.rounds(),
                static_cast<long long>(cost_add(best, folded.constant)),
                static_cast<long long>(cost_add(search.lower_bound(), folded.constant)), seconds_since(begin));
    std::fflush(stdout);
  }
}

// The cheapest step found by each search's round `round` (kForbidden = none).
int64_t best_by(const std::vector<AnytimeStep>& steps, long round) {
  int64_t best = kForbidden;
  for (const auto& s : steps) {
    if (s.round <= round) best = std::min(best, s.cost);
  }
  return best;
}

void run_anytime(const std::string& file, long rounds, AnytimeOptions options) {
  const auto begin = std::chrono::steady_clock::now();
  const Problem problem = load_iopddl(file);
  options.max_rounds = rounds;
  options.dual_steps = 8;
  options.dual_max_kernel_nodes = 4000;
  std::vector<AnytimeStep> steps;
  const AnytimeResult result = anytime_search(problem, options, [&](const AnytimeStep& s) { steps.push_back(s); });
  const long step = std::max(1L, rounds / 10);
  for (long r = step; r <= rounds; r += step) {
    std::printf("rounds %ld cost %lld\n", r, static_cast<long long>(best_by(steps, r)));
  }
  std::printf("threads %d seed %llu best %lld bound %lld rounds %ld restarts %ld stop %s seconds %.1f\n",
              options.threads, static_cast<unsigned long long>(options.seed), static_cast<long long>(result.best_cost),
              static_cast<long long>(result.lower_bound), result.rounds, result.restarts, result.stop_reason.c_str(),
              seconds_since(begin));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"anytime_rounds: Lagrangian searches for a fixed number of rounds"};
  std::string file;
  long rounds = 100;
  LagrangianOptions options;
  AnytimeOptions anytime;
  anytime.threads = 0;
  app.add_option("file", file, "IOPDDL contest file")->required();
  app.add_option("rounds", rounds, "rounds to run (by each search)")->required()->check(CLI::PositiveNumber);
  app.add_option("--seed", options.seed, "the (first) search's seed");
  app.add_option("--bnb-attempts", options.bnb_attempts, "branch-and-bound regions per application (0 = none)");
  app.add_option("--region-attempts", options.region_attempts, "Z3 regions per application (0 = none)");
  app.add_option("--threads", anytime.threads, "run the anytime search with this many searches")
      ->check(CLI::PositiveNumber);
  app.add_option("--epoch-rounds", anytime.epoch_rounds, "with --threads: rounds between exchanges")
      ->check(CLI::PositiveNumber);
  app.add_option("--adopt-after", anytime.adopt_after,
                 "with --threads: epochs behind after which a search adopts the best plan (0 = never)");
  app.add_option("--searches", anytime.searches, "with --threads: searches run on the threads (0 = one per thread)");
  app.add_option("--keep-after", anytime.keep_after,
                 "with --threads: rounds after which only the best `threads` searches go on (0 = all)");
  app.add_option("--restart-after", anytime.restart_after,
                 "with --threads: epochs behind after which a search starts afresh with a new seed (0 = never)");
  app.add_option("--lead-epochs", anytime.lead_epochs,
                 "with --threads: epochs a search may run ahead of the exchange where nothing else passes into it (0 = "
                 "lock-step)");
  app.add_option("--relink-every", anytime.relink_every,
                 "with --threads: epochs between relinks of a lagging search's incumbent with the best plan (0 = never)");
  CLI11_PARSE(app, argc, argv);
  if (anytime.threads == 0) {
    run_one_search(file, rounds, options);
    return 0;
  }
  anytime.seed = options.seed;
  anytime.region_attempts = options.region_attempts;
  anytime.stall_rounds = 0;
  run_anytime(file, rounds, anytime);
  return 0;
}
