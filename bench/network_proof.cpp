// `network_proof` (bench tool, built with the tests): the cost network's
// branch and bound (network_search.hpp), under climbing cutoffs when COST
// is given (network_cutoffs.hpp), on an IOPDDL file's exact kernel
// (the folded kernel, fold_problem, with its time slots as knapsack rows,
// reparameterized), asked for
// plans below COST (a cost of the file's problem; omit for none), for at
// most SECONDS. With --penalize the folded kernel is penalized by the
// LP relaxation's row duals (row_penalties.hpp; the LP of the reduced
// kernel, its rows mapped to the folded rows by time step) first. Prints the outcome, the root bound and the best cost in the
// file's units, the search nodes and the seconds.
//
// With --plan (a JSON array of strategies, as synth --solution writes it)
// it first prints the plan's overflowing rows and checks the network's
// invariant on it (offset + floor + the plan's unary and edge costs + the
// rows' slack terms = its cost) before and after the root's propagation
// without a cutoff.
//
// With --no-climb, one search below COST, as the exact loop's step runs it.
//
// It first prints the folded kernel's size and rows_bytes_bound (the bound
// on its rows' bytes that gates the regions after the anytime search);
// with --seconds 0 it stops there.
//
// With --plan and --regions S, it searches regions around the plan instead
// (network_regions.hpp) for S seconds and prints what they found.
//
//   network_proof FILE.json.gz [--below COST] [--seconds S] [--penalize] [--no-climb] [--plan FILE [--regions S [--region-work N]]]
#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "synth/solver/cost_network.hpp"
#include "synth/solver/dual_bound.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/iopddl.hpp"
#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/lp_relaxation.hpp"
#include "synth/solver/network_input.hpp"
#include "synth/solver/network_cutoffs.hpp"
#include "synth/solver/network_regions.hpp"
#include "synth/solver/network_search.hpp"
#include "synth/solver/reduction.hpp"

using namespace shardsynth::synth;

int main(int argc, char** argv) {
  CLI::App app{"the cost network's branch and bound on an IOPDDL file's kernel"};
  std::string file;
  int64_t below = kForbidden;
  double seconds = 60;
  app.add_option("file", file)->required();
  app.add_option("--below", below);
  app.add_option("--seconds", seconds);
  std::string plan_file;
  app.add_option("--plan", plan_file);
  bool no_climb = false;
  app.add_flag("--no-climb", no_climb, "one search below COST (as the exact loop's step), not climbing cutoffs");
  double regions = 0;
  app.add_option("--regions", regions, "with --plan: search regions around the plan (network_regions.hpp) for this many seconds, then stop");
  long region_work = NetworkRegionOptions{}.work_per_region;
  app.add_option("--region-work", region_work, "values each region's search may scan");
  bool penalize = false;
  app.add_flag("--penalize", penalize, "bound with the kernel penalized by the LP's row duals, reparameterized again");
  CLI11_PARSE(app, argc, argv);
  const auto begin = std::chrono::steady_clock::now();
  const Problem problem = load_iopddl(file);
  const auto since = [&begin] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count(); };
  std::printf("loaded at %.2f s\n", since());
  const FoldedProblem folded = fold_problem(problem);
  std::printf("folded at %.2f s: %zu variables, rows at most %.1f MB\n", since(), folded.kernel.nodes.size(),
              static_cast<double>(rows_bytes_bound(folded)) / 1e6);
  if (seconds <= 0) return 0;
  std::optional<LpRelaxation> lp;
  Problem kernel;
  if (penalize && folded.usage_limit) {
    const Reduced reduced = reduce(problem);
    const DualBound dual = reparameterize(reduced.kernel);
    kernel = dual.problem;
    lp = solve_lp_relaxation(kernel);
    std::printf("lp %s bound %lld (%d binding rows, %.2f s)\n", lp->outcome.c_str(),
                static_cast<long long>(reduced.constant + dual.constant + lp->bound),
                static_cast<int>(lp->binding_rows.size()), lp->ms / 1000);
  }
  const NetworkInput input = network_input(problem, folded, kernel, lp ? &*lp : nullptr);
  std::printf("folded kernel %zu nodes, %zu rows, TRW-S bound %lld, ready at %.2f s\n", input.network.nodes.size(),
              input.rows.size(), static_cast<long long>(input.offset), since());
  if (!plan_file.empty()) {
    std::ifstream in(plan_file);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    Assignment original;
    for (char& c : text) if (c == '[' || c == ']' || c == ',') c = ' ';
    std::istringstream is(text);
    for (int v; is >> v;) original.push_back(v);
    const Assignment plan = fold_assignment(folded, original);
    if (plan.empty()) {
      std::printf("the plan does not fold\n");
      return 2;
    }
    std::printf("plan cost %lld, folded score %lld\n", (long long)evaluate(problem, original), (long long)input.score(plan));
    CostNetwork net(input.network, input.rows, input.multipliers, kForbidden);
    const auto check = [&](const char* when) {
      __int128 total = input.offset + net.floor();
      for (std::size_t i = 0; i < plan.size(); ++i) total += net.unary(i, plan[i]);
      for (int e = 0; e < net.edge_count(); ++e) total += net.residual(e, plan[net.edge_from(e)], plan[net.edge_to(e)]);
      for (std::size_t r = 0; r < input.rows.size(); ++r) {
        const int64_t q = net.multiplier(r);
        int64_t k = penalty(q, input.rows[r].capacity, input.multipliers.den);
        for (std::size_t m = 0; m < input.rows[r].vars.size(); ++m) k -= penalty(q, input.rows[r].weights[m][plan[input.rows[r].vars[m]]], input.multipliers.den);
        total += k;
      }
      std::printf("%s: invariant total %lld, floor %lld\n", when, (long long)total, (long long)(input.offset + net.floor()));
    };
    check("start");
    net.propagate();
    check("propagated");
    std::vector<int> all(input.rows.size());
    for (std::size_t r = 0; r < all.size(); ++r) all[r] = r;
    net.price_rows(all);
    net.propagate();
    check("priced");
    for (std::size_t r = 0; r < input.rows.size(); ++r) {
      int64_t sum = 0;
      for (std::size_t m = 0; m < input.rows[r].vars.size(); ++m) sum += input.rows[r].weights[m][plan[input.rows[r].vars[m]]];
      if (sum > input.rows[r].capacity) std::printf("row %zu overflows: %lld > %lld\n", r, (long long)sum, (long long)input.rows[r].capacity);
    }
    if (regions > 0) {
      NetworkRegionOptions lns;
      lns.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(regions * 1000));
      lns.work_per_region = region_work;
      const auto from = std::chrono::steady_clock::now();
      const NetworkRegionRun run = search_network_regions(input, input.score(plan), plan, lns);
      std::printf("regions: %ld searched, %ld closed, size at the end %d, %zu plans, best %lld, %.2f s\n", run.regions,
                  run.closed, run.size, run.plans.size(),
                  static_cast<long long>(run.plans.empty() ? input.score(plan) : run.plans.back().second),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count());
      return 0;
    }
  }
  NetworkSearchOptions options;
  options.deadline = begin + std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  const auto search = no_climb ? search_network : search_network_by_cutoffs;
  const NetworkSearch found = search(input, below, {}, options, [&](const Assignment&, int64_t cost) {
    std::printf("plan %lld at %.2f s\n", static_cast<long long>(cost),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    std::fflush(stdout);
  });
  std::printf("outcome %s, root bound %lld, best %lld, nodes %ld, work %ld, priced rows %d, search %.2f s, total %.2f s\n",
              found.outcome.c_str(), static_cast<long long>(found.root_bound),
              static_cast<long long>(found.incumbent), found.nodes, found.work,
              found.priced_rows, found.ms / 1000,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  return 0;
}
