// The knapsack rows of a folded problem (knapsack_rows.hpp), written by a
// sweep over the time slots, against their definition computed slot by
// slot: each slot's members are the kernel nodes with a live usage piece
// and a nonzero weight, their weights the sums of those pieces; a slot
// whose heaviest values fit the limit gives no row, and one that repeats
// the last row's members and weights only tightens its capacity. The
// bound on their bytes (rows_bytes_bound) is never below what they take.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "synth/solver/folding.hpp"
#include "synth/solver/knapsack_rows.hpp"
#include "synth/solver/test_problems.hpp"

namespace shardsynth::synth {
namespace {

std::vector<KnapsackRow> rows_by_definition(const FoldedProblem& folded) {
  std::vector<KnapsackRow> rows;
  if (!folded.usage_limit) return rows;
  for (int t = 0; t < static_cast<int>(folded.slot_times.size()); ++t) {
    std::map<int, std::vector<int64_t>> members;
    for (int v = 0; v < static_cast<int>(folded.pieces.size()); ++v) {
      for (const UsagePiece& piece : folded.pieces[v]) {
        if (t < piece.from || t >= piece.to) continue;
        auto& w = members[v];
        w.resize(piece.usages.size(), 0);
        for (std::size_t s = 0; s < w.size(); ++s) w[s] += piece.usages[s];
      }
    }
    KnapsackRow row;
    row.capacity = *folded.usage_limit - folded.base[t];
    row.step = folded.slot_times[t];
    int64_t heaviest = 0;
    for (const auto& [v, w] : members) {
      const int64_t most = *std::max_element(w.begin(), w.end());
      if (most == 0) continue;
      heaviest += most;
      row.vars.push_back(v);
      row.weights.push_back(w);
    }
    if (heaviest <= row.capacity) continue;
    if (!rows.empty() && rows.back().vars == row.vars && rows.back().weights == row.weights) {
      if (row.capacity < rows.back().capacity) rows.back() = row;
      continue;
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

TEST_CASE("rows_of_folded_MatchesTheSlotBySlotDefinition") {
  std::mt19937 rng(23u);
  int with_rows = 0;
  for (int i = 0; i < 2000; ++i) {
    Problem p = binding_problem(rng, 12);
    if (i % 10 == 9) p.usage_limit.reset();
    const FoldedProblem folded = fold_problem(p);
    if (folded.infeasible) continue;
    CAPTURE(i);
    const std::vector<KnapsackRow> swept = rows_of_folded(folded);
    const std::vector<KnapsackRow> defined = rows_by_definition(folded);
    REQUIRE(swept.size() == defined.size());
    for (std::size_t r = 0; r < swept.size(); ++r) {
      CHECK(swept[r].vars == defined[r].vars);
      CHECK(swept[r].weights == defined[r].weights);
      CHECK(swept[r].capacity == defined[r].capacity);
      CHECK(swept[r].step == defined[r].step);
    }
    std::size_t bytes = 0;  // what the rows take, as rows_bytes_bound counts them
    for (const KnapsackRow& row : swept) {
      bytes += sizeof(KnapsackRow);
      for (const auto& w : row.weights) bytes += w.size() * sizeof(int64_t) + 3 * sizeof(void*) + 16 + sizeof(int);
    }
    CHECK(bytes <= rows_bytes_bound(folded));
    with_rows += !swept.empty();
  }
  CHECK(with_rows > 200);  // 316 of the 2,000 have rows
}

}  // namespace shardsynth::synth
