#include "synth/stages/stage_dp.hpp"

#include <algorithm>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

CutChoice best_cuts(int boundaries, int stages, const std::function<int64_t(int, int)>& time) {
  const int m = boundaries - 1;
  CutChoice out;
  if (stages < 1 || m < stages) {
    out.bottleneck = kForbidden;
    return out;
  }
  std::vector<std::vector<int64_t>> t(m + 1, std::vector<int64_t>(m + 1, kForbidden));
  for (int i = 0; i < m; ++i) {
    for (int j = i + 1; j <= m; ++j) t[i][j] = time(i, j);
  }
  // Phase 1: f[s][j] = least bottleneck of s stages covering [b_0, b_j).
  std::vector<std::vector<int64_t>> f(stages + 1, std::vector<int64_t>(m + 1, kForbidden));
  f[0][0] = 0;
  for (int s = 1; s <= stages; ++s) {
    for (int j = s; j <= m; ++j) {
      for (int i = s - 1; i < j; ++i) {
        if (f[s - 1][i] >= kForbidden || t[i][j] >= kForbidden) continue;
        f[s][j] = std::min(f[s][j], std::max(f[s - 1][i], t[i][j]));
      }
    }
  }
  out.bottleneck = f[stages][m];
  if (out.bottleneck >= kForbidden) return out;
  // Phase 2: g[s][j] = least sum of s stages covering [b_0, b_j), each within the bottleneck.
  std::vector<std::vector<int64_t>> g(stages + 1, std::vector<int64_t>(m + 1, kForbidden));
  std::vector<std::vector<int>> from(stages + 1, std::vector<int>(m + 1, -1));
  g[0][0] = 0;
  for (int s = 1; s <= stages; ++s) {
    for (int j = s; j <= m; ++j) {
      for (int i = s - 1; i < j; ++i) {
        if (g[s - 1][i] >= kForbidden || t[i][j] > out.bottleneck) continue;
        const int64_t sum = g[s - 1][i] + t[i][j];
        if (sum < g[s][j]) {
          g[s][j] = sum;
          from[s][j] = i;
        }
      }
    }
  }
  out.total = g[stages][m];
  for (int s = stages, j = m; s > 1; --s) {
    j = from[s][j];
    out.cuts.push_back(j);
  }
  std::reverse(out.cuts.begin(), out.cuts.end());
  return out;
}

}  // namespace shardsynth::synth
