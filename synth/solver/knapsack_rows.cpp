#include "synth/solver/knapsack_rows.hpp"

#include <algorithm>
#include <map>

namespace shardsynth::synth {
namespace {

// The largest total the row's members can reach (forbidden values included:
// a conservative test of whether the row can bind).
int64_t heaviest(const KnapsackRow& row) {
  int64_t sum = 0;
  for (const auto& w : row.weights) sum += *std::max_element(w.begin(), w.end());
  return sum;
}

}  // namespace

std::vector<KnapsackRow> rows_of_folded(const FoldedProblem& folded) {
  std::vector<KnapsackRow> rows;
  if (!folded.usage_limit) return rows;
  const int slots = static_cast<int>(folded.slot_times.size());
  std::vector<std::map<int, std::vector<int64_t>>> live(slots);  // per slot: member -> summed weights
  for (int v = 0; v < static_cast<int>(folded.pieces.size()); ++v) {
    for (const auto& piece : folded.pieces[v]) {
      for (int t = piece.from; t < piece.to; ++t) {
        auto& w = live[t][v];
        if (w.empty()) w.assign(piece.usages.size(), 0);
        for (std::size_t s = 0; s < w.size(); ++s) w[s] += piece.usages[s];
      }
    }
  }
  for (int t = 0; t < slots; ++t) {
    KnapsackRow row;
    row.capacity = *folded.usage_limit - folded.base[t];
    row.step = folded.slot_times[t];
    for (auto& [v, w] : live[t]) {
      if (*std::max_element(w.begin(), w.end()) == 0) continue;
      row.vars.push_back(v);
      row.weights.push_back(std::move(w));
    }
    if (heaviest(row) <= row.capacity) continue;
    if (!rows.empty() && rows.back().vars == row.vars && rows.back().weights == row.weights) {
      if (row.capacity < rows.back().capacity) rows.back() = std::move(row);
      continue;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace shardsynth::synth
