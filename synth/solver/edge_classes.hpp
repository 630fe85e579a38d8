#pragma once
// The classes of an edge's cost table: rows that are equal over the allowed
// columns fall into one class, and so do columns equal over the allowed
// rows. A strategy with hundreds of choices often has only a few distinct
// rows into one neighbour (its choices differ elsewhere), so the table over
// classes can be far smaller than the table itself; the pseudo-Boolean
// encoding (z3_encoding.hpp) writes that one instead.
#include <cstdint>
#include <vector>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct EdgeClasses {
  std::vector<int> row_class;                  // per `from` strategy: its row class, -1 when banned
  std::vector<int> col_class;                  // per `to` strategy: its column class, -1 when banned
  std::vector<std::vector<int>> row_members;   // per row class: its `from` strategies, ascending
  std::vector<std::vector<int>> col_members;   // per column class: its `to` strategies, ascending
  std::vector<int64_t> costs;                  // row-major [row class * col_members.size() + column class]: the table's entry
};

// Classes of `edge` in `problem`, leaving out banned strategies (the nodes'
// forbidden ones); classes are numbered in order of their first strategy.
EdgeClasses edge_classes(const Problem& problem, const ProblemEdge& edge, const std::vector<bool>& banned_from,
                         const std::vector<bool>& banned_to);

// What the pseudo-Boolean encoding writes for the classes: one term per
// class entry of nonzero cost (forbidden ones included), and one per member
// of a class of several strategies (its link to the class literal).
long encoded_terms(const EdgeClasses& classes);

// Banned strategies of a node: those of forbidden cost.
std::vector<bool> banned_strategies(const ProblemNode& node);

}  // namespace shardsynth::synth
