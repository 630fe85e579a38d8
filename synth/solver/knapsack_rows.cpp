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
  // A sweep over the slots: each piece joins its node's weights where it
  // starts and leaves where it ends, and the members' weights are written
  // out only at the slots where a piece starts or ends.
  std::vector<std::vector<std::pair<int, const UsagePiece*>>> joins(slots), leaves(slots + 1);
  for (int v = 0; v < static_cast<int>(folded.pieces.size()); ++v) {
    for (const UsagePiece& piece : folded.pieces[v]) {
      if (piece.from >= std::min(piece.to, slots)) continue;
      joins[piece.from].emplace_back(v, &piece);
      leaves[std::min(piece.to, slots)].emplace_back(v, &piece);
    }
  }
  std::map<int, std::pair<int, std::vector<int64_t>>> live;  // member -> (its pieces live, summed weights)
  KnapsackRow current;      // this slot's members and weights (capacity and step unset)
  int64_t most = 0;         // heaviest(current)
  bool as_last = false;     // rows.back() has current's members and weights
  for (int t = 0; t < slots; ++t) {
    if (!joins[t].empty() || !leaves[t].empty()) {
      for (const auto& [v, piece] : leaves[t]) {
        auto& [count, w] = live[v];
        for (std::size_t s = 0; s < w.size(); ++s) w[s] -= piece->usages[s];
        if (--count == 0) live.erase(v);
      }
      for (const auto& [v, piece] : joins[t]) {
        auto& [count, w] = live[v];
        if (w.empty()) w.assign(piece->usages.size(), 0);
        for (std::size_t s = 0; s < w.size(); ++s) w[s] += piece->usages[s];
        ++count;
      }
      current = KnapsackRow{};
      for (const auto& [v, entry] : live) {
        if (*std::max_element(entry.second.begin(), entry.second.end()) == 0) continue;
        current.vars.push_back(v);
        current.weights.push_back(entry.second);
      }
      most = heaviest(current);
      as_last = !rows.empty() && rows.back().vars == current.vars && rows.back().weights == current.weights;
    }
    const int64_t capacity = *folded.usage_limit - folded.base[t];
    if (most <= capacity) continue;
    if (as_last) {
      if (capacity < rows.back().capacity) {
        rows.back().capacity = capacity;
        rows.back().step = folded.slot_times[t];
      }
      continue;
    }
    rows.push_back(current);
    rows.back().capacity = capacity;
    rows.back().step = folded.slot_times[t];
    as_last = true;
  }
  return rows;
}

std::size_t rows_bytes_bound(const FoldedProblem& folded) {
  if (!folded.usage_limit) return 0;
  const int slots = static_cast<int>(folded.slot_times.size());
  constexpr std::size_t kValueBytes = sizeof(int64_t);
  constexpr std::size_t kMemberBytes = 3 * sizeof(void*) + 16 + sizeof(int);  // the weights' vector, its heap header, the member's index
  std::vector<std::size_t> change(slots + 1, 0);  // per slot: bytes that join (+) or leave (-), by the pieces' bounds
  std::vector<std::size_t> leave(slots + 1, 0);
  std::vector<char> moves(slots + 1, 0);          // a piece starts or ends there
  for (const auto& pieces : folded.pieces) {
    for (const UsagePiece& piece : pieces) {
      const int to = std::min(piece.to, slots);
      if (piece.from >= to) continue;
      const std::size_t bytes = piece.usages.size() * kValueBytes + kMemberBytes;
      change[piece.from] += bytes;
      leave[to] += bytes;
      moves[piece.from] = moves[to] = 1;
    }
  }
  std::size_t live = 0, total = 0;
  for (int t = 0; t < slots; ++t) {
    live += change[t];
    live -= leave[t];
    if (moves[t] || t == 0) total += live + sizeof(KnapsackRow);  // rows start only there
  }
  return total;
}

}  // namespace shardsynth::synth
