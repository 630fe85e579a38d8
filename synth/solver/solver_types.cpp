#include "synth/solver/solver_types.hpp"

#include <algorithm>

namespace shardsynth::synth {

std::optional<std::chrono::steady_clock::time_point> search_deadline(const CegisOptions& options,
                                                                     std::chrono::steady_clock::time_point start) {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> deadline = options.deadline;
  if (options.time_limit_s) {
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*options.time_limit_s));
    deadline = deadline ? std::min(*deadline, end) : end;
  }
  return deadline;
}

ProblemSize size_of(const Problem& problem) {
  ProblemSize s{static_cast<int>(problem.nodes.size()), static_cast<int>(problem.edges.size()), 0};
  for (const auto& node : problem.nodes) {
    s.strategies += std::count_if(node.costs.begin(), node.costs.end(), [](int64_t c) { return c < kForbidden; });
  }
  return s;
}

double CegisResult::relative_gap() const {
  if (proven_optimal || best.empty() || best_cost <= 0) return 0;
  return static_cast<double>(best_cost - lower_bound) / static_cast<double>(best_cost);
}

}  // namespace shardsynth::synth
