#include "ir/recompute_segments.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "ir/op_table.hpp"

namespace shardsynth::ir {

RecomputeSegments recompute_segments(const Graph& graph, const std::vector<Vertex>& order) {
  const std::size_t n = order.size();
  std::vector<int64_t> position(graph.size(), 0);
  for (std::size_t i = 0; i < n; ++i) position[order[i]] = static_cast<int64_t>(i);
  RecomputeSegments out{std::vector<int>(graph.size(), 0), std::vector<int64_t>(graph.size(), 0), {}};
  // crossing after position i: op outputs produced at or before i and read after it.
  std::vector<int64_t> delta(n + 1, 0);
  for (Vertex v : order) {
    int64_t last = position[v];
    for (const auto& [user, operand] : graph.users_of(v)) last = std::max(last, position[user]);
    out.last_read[v] = last;
    if (graph.node(v).kind == kPlaceholder || last == position[v]) continue;
    ++delta[position[v]];
    --delta[last];
  }
  // The cuts with at most one op output across, and a signature (op kinds in
  // order) of each piece between them.
  std::vector<int64_t> cut_after;
  std::vector<std::string> signature(1);
  int64_t crossing = 0;
  for (std::size_t i = 0; i < n; ++i) {
    signature.back() += graph.node(order[i]).kind + ";";
    crossing += delta[i];
    // A graph input starts no piece of its own: it joins the piece of its readers.
    const bool op = graph.node(order[i]).kind != kPlaceholder;
    if ((op && crossing <= 1) || i + 1 == n) {
      cut_after.push_back(static_cast<int64_t>(i));
      if (i + 1 < n) signature.emplace_back();
    }
  }
  // Pieces are grouped into segments of `group` pieces: the period of the
  // repeated blocks (the shift with the longest run of pieces equal to the
  // piece that far on, spanning at least two blocks), or about sqrt(pieces)
  // when pieces repeat one by one or not at all.
  const std::size_t pieces = cut_after.size();
  std::size_t group = 0, first = 0;  // pieces per segment; the piece the first whole block starts at
  std::size_t best_run = 0;
  for (std::size_t shift = 1; 2 * shift <= pieces; ++shift) {
    std::size_t run = 0;
    for (std::size_t i = 0; i + shift < pieces; ++i) {
      run = signature[i] == signature[i + shift] ? run + 1 : 0;
      if (run > best_run && run >= shift) {
        best_run = run;
        group = shift;
        first = i + 1 - run;
      }
    }
  }
  if (group <= 1) {
    group = std::max<std::size_t>(2, static_cast<std::size_t>(std::lround(std::sqrt(pieces))));
    first = 0;
  }
  // Pieces before the first block form a segment of their own.
  auto segment_of = [&](std::size_t piece) {
    return static_cast<int>(piece < first ? 0 : (first > 0) + (piece - first) / group);
  };
  std::size_t piece = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out.segment[order[i]] = segment_of(piece);
    if (static_cast<int64_t>(i) == cut_after[piece]) {
      if (piece + 1 == pieces || segment_of(piece + 1) != segment_of(piece)) {
        out.segment_end.push_back(static_cast<int64_t>(i));
      }
      ++piece;
    }
  }
  return out;
}

bool may_recompute(const Graph& graph, const RecomputeSegments& segments, Vertex v) {
  const Node& node = graph.node(v);
  if (node.kind == kPlaceholder || node.kind == kOutput) return false;
  for (const auto& [user, operand] : graph.users_of(v)) {
    if (segments.segment[user] != segments.segment[v]) return false;
  }
  return true;
}

}  // namespace shardsynth::ir
