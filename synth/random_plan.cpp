#include "synth/random_plan.hpp"

#include "ir/error.hpp"
#include "synth/followers.hpp"

namespace shardsynth::synth {
namespace {

// splitmix64 (Steele, Lea and Flood): small, seedable, and the same everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) for n >= 1 (the modulo bias is below 2^-50 for the sizes drawn here).
  int below(std::size_t n) { return static_cast<int>(next() % n); }

 private:
  uint64_t state_;  // the generator's whole state
};

bool all_replicated(const StrategyInfo& s) {
  if (!s.output.is_replicated() || !s.result.is_replicated()) return false;
  for (const auto& spec : s.operands) {
    if (!spec.is_replicated()) return false;
  }
  return true;
}

// One draw: a legal assignment, or an empty one at a dead end.
Assignment draw(const Problem& problem, const std::vector<std::vector<Incidence>>& incidence, SplitMix64& rng) {
  Assignment a(problem.nodes.size(), -1);
  std::vector<int> choices;
  for (std::size_t n = 0; n < problem.nodes.size(); ++n) {
    choices.clear();
    const ProblemNode& node = problem.nodes[n];
    for (int s = 0; s < node.size(); ++s) {
      if (node.costs[s] >= kForbidden) continue;
      bool legal = true;
      for (const Incidence& inc : incidence[n]) {
        const int other = a[inc.other];
        if (other < 0) continue;  // not drawn yet
        const ProblemEdge& edge = problem.edges[inc.edge];
        const int to_size = problem.nodes[edge.to].size();
        if ((inc.is_from ? edge.costs[s * to_size + other] : edge.costs[other * to_size + s]) >= kForbidden) {
          legal = false;
          break;
        }
      }
      if (legal) choices.push_back(s);
    }
    if (choices.empty()) return {};
    a[n] = choices[rng.below(choices.size())];
  }
  return a;
}

}  // namespace

Assignment random_assignment(const Lowered& lowered, uint64_t seed) {
  const Problem& problem = lowered.problem;
  const auto incidence = incidence_lists(problem);
  SplitMix64 rng(seed);
  for (int attempt = 0; attempt < kRandomPlanDraws; ++attempt) {
    Assignment a = draw(problem, incidence, rng);
    if (!a.empty() && within_usage_limit(problem, a)) return a;
  }
  throw ir::InputError("--plan random --seed " + std::to_string(seed) + ": no legal plan" +
                       (problem.usage_limit ? " within the memory budget" : std::string()) + " in " +
                       std::to_string(kRandomPlanDraws) + " draws");
}

int replicated_strategy(const Lowered& lowered, int node) {
  const auto& strategies = lowered.nodes.at(node).strategies;
  for (std::size_t s = 0; s < strategies.size(); ++s) {
    if (all_replicated(strategies[s]) && lowered.problem.nodes[node].costs[s] < kForbidden) return static_cast<int>(s);
  }
  return -1;
}

Assignment shrink_plan(const Lowered& lowered, const Assignment& failing, const PlanFails& fails) {
  Assignment best = failing;
  for (std::size_t n = 0; n < best.size(); ++n) {
    if (lowered.nodes[n].role == NodeRole::follower) continue;  // moves with its leader
    const int whole = replicated_strategy(lowered, static_cast<int>(n));
    if (whole < 0 || whole == best[n]) continue;
    Assignment candidate = best;
    candidate[n] = whole;
    follow_leaders(lowered, candidate);
    if (evaluate(lowered.problem, candidate) >= kForbidden) continue;
    if (fails(candidate)) best = std::move(candidate);
  }
  return best;
}

std::vector<std::string> sharded_nodes(const Lowered& lowered, const Assignment& assignment) {
  const int mesh_rank = lowered.mesh.rank();
  std::vector<std::string> lines;
  for (std::size_t n = 0; n < assignment.size(); ++n) {
    if (lowered.nodes[n].role == NodeRole::follower) continue;  // a copy of its leader's choice
    const StrategyInfo& s = lowered.nodes[n].strategies[assignment[n]];
    if (all_replicated(s)) continue;
    std::string line = lowered.problem.nodes[n].label + ": " + ir::to_string(s.output, mesh_rank);
    if (s.result != s.output) line += " (computed as " + ir::to_string(s.result, mesh_rank) + ")";
    std::string operands;
    for (const auto& spec : s.operands) operands += (operands.empty() ? "" : ", ") + ir::to_string(spec, mesh_rank);
    if (!operands.empty()) line += " reading " + operands;
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace shardsynth::synth
