#include "synth/solver/reduced_cost_fixing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace shardsynth::synth {
namespace {

constexpr long double kInf = std::numeric_limits<long double>::infinity();

long double least(const std::vector<double>& values) {
  long double m = kInf;
  for (double v : values) m = std::min<long double>(m, v);
  return m;
}

// Whether a bound in floating point proves that every assignment it covers
// costs at least `incumbent`: costs are integers, so a bound above
// incumbent - 1 (less a margin for the rounding of the reduced costs) does.
bool reaches(long double bound, int64_t incumbent) {
  const long double margin = 1e-9L * std::fabs(bound) + 1e-6L;
  return bound - margin > static_cast<long double>(incumbent) - 1;
}

// Per node and strategy: how far its best pair on each incident edge lies
// above that edge's least reduced cost, summed over the edges.
std::vector<std::vector<long double>> edge_excess(const Problem& p, const LpRelaxation& lp,
                                                  const std::vector<long double>& edge_least) {
  std::vector<std::vector<long double>> excess(p.nodes.size());
  for (std::size_t v = 0; v < p.nodes.size(); ++v) excess[v].assign(p.nodes[v].size(), 0);
  for (std::size_t e = 0; e < p.edges.size(); ++e) {
    const ProblemEdge& edge = p.edges[e];
    const int rows = p.nodes[edge.from].size(), cols = p.nodes[edge.to].size();
    std::vector<long double> by_row(rows, kInf), by_col(cols, kInf);
    for (int s = 0; s < rows; ++s) {
      for (int t = 0; t < cols; ++t) {
        const long double d = lp.edge_reduced[e][static_cast<std::size_t>(s) * cols + t];
        by_row[s] = std::min(by_row[s], d);
        by_col[t] = std::min(by_col[t], d);
      }
    }
    for (int s = 0; s < rows; ++s) excess[edge.from][s] += by_row[s] - edge_least[e];
    for (int t = 0; t < cols; ++t) excess[edge.to][t] += by_col[t] - edge_least[e];
  }
  return excess;
}

}  // namespace

FixingCount fix_by_reduced_cost(Problem& problem, const LpRelaxation& lp, int64_t incumbent) {
  FixingCount count;
  if (!lp.has_duals() || !std::isfinite(lp.bound_exact)) return count;
  const long double base = lp.bound_exact;
  std::vector<long double> node_least, edge_least;
  for (const auto& d : lp.node_reduced) node_least.push_back(least(d));
  for (const auto& d : lp.edge_reduced) edge_least.push_back(least(d));
  const auto excess = edge_excess(problem, lp, edge_least);
  // Node strategies first, each with its best pair on every incident edge.
  for (std::size_t v = 0; v < problem.nodes.size(); ++v) {
    for (int s = 0; s < problem.nodes[v].size(); ++s) {
      if (problem.nodes[v].costs[s] >= kForbidden) continue;
      const long double bound = base + (lp.node_reduced[v][s] - node_least[v]) + excess[v][s];
      if (!reaches(bound, incumbent)) continue;
      problem.nodes[v].costs[s] = kForbidden;
      ++count.strategies;
    }
  }
  // Then pairs whose own excess and both ends' reach it.
  for (std::size_t e = 0; e < problem.edges.size(); ++e) {
    ProblemEdge& edge = problem.edges[e];
    const int cols = problem.nodes[edge.to].size();
    for (std::size_t k = 0; k < edge.costs.size(); ++k) {
      const int s = static_cast<int>(k / cols), t = static_cast<int>(k % cols);
      if (edge.costs[k] >= kForbidden || problem.nodes[edge.from].costs[s] >= kForbidden ||
          problem.nodes[edge.to].costs[t] >= kForbidden) {
        continue;
      }
      const long double bound = base + (lp.edge_reduced[e][k] - edge_least[e]) +
                                (lp.node_reduced[edge.from][s] - node_least[edge.from]) +
                                (lp.node_reduced[edge.to][t] - node_least[edge.to]);
      if (!reaches(bound, incumbent)) continue;
      edge.costs[k] = kForbidden;
      ++count.pairs;
    }
  }
  return count;
}

}  // namespace shardsynth::synth
