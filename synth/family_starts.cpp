#include "synth/family_starts.hpp"

#include <algorithm>
#include <string>

#include "ir/error.hpp"
#include "synth/plans.hpp"
#include "synth/solver/anytime.hpp"
#include "synth/solver/interrupt.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// Which strategies a problem allows, node by node.
std::vector<std::vector<bool>> allowed(const Problem& problem) {
  std::vector<std::vector<bool>> out(problem.nodes.size());
  for (std::size_t n = 0; n < out.size(); ++n) {
    for (int64_t c : problem.nodes[n].costs) out[n].push_back(c < kForbidden);
  }
  return out;
}

}  // namespace

std::vector<StartPlan> family_starts(const Lowered& lowered, const FamilyStartOptions& options) {
  std::vector<StartPlan> starts;
  const Problem& whole = lowered.problem;
  if (!whole.usage_limit) return starts;
  std::vector<std::string> families = plan_names();
  families.erase(std::remove(families.begin(), families.end(), std::string(kRandomPlan)), families.end());
  std::optional<Clock::time_point> end_of_share;
  if (options.deadline) {
    const auto left = std::max(Clock::duration::zero(), *options.deadline - Clock::now());
    end_of_share = Clock::now() + std::chrono::duration_cast<Clock::duration>(left * options.share);
  }
  std::vector<std::vector<std::vector<bool>>> seen;  // the allowed strategies of each family tried
  for (std::size_t f = 0; f < families.size(); ++f) {
    if ((end_of_share && Clock::now() >= *end_of_share) || interrupt_requested()) break;
    const auto begin = Clock::now();
    StrategyFilter filter;
    try {
      filter = plan_filter(families[f], lowered.graph, lowered.mesh);
    } catch (const ir::InputError&) {
      continue;  // a family this graph or mesh cannot express
    }
    const Problem restricted = restrict_problem(lowered, filter);
    auto pattern = allowed(restricted);
    if (std::find(seen.begin(), seen.end(), pattern) != seen.end()) continue;
    seen.push_back(std::move(pattern));
    if (least_peak(restricted).bytes > *whole.usage_limit) continue;
    AnytimeOptions search;
    search.threads = std::max(1, options.threads);
    search.seed = options.seed;
    search.stall_rounds = options.stall_rounds;
    if (end_of_share) {
      // An equal part of what is left of the share for each family still to try.
      const auto left = std::max(Clock::duration::zero(), *end_of_share - Clock::now());
      search.deadline = Clock::now() + left / static_cast<int>(families.size() - f);
    }
    const AnytimeResult found = anytime_search(restricted, search, nullptr);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
    if (!found.best.empty()) starts.push_back({found.best, "plan:" + families[f], ms});
  }
  return starts;
}

}  // namespace shardsynth::synth
