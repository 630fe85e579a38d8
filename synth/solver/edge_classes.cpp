#include "synth/solver/edge_classes.hpp"

#include <map>

namespace shardsynth::synth {
namespace {

// Groups the indices 0..count-1 not banned by `key(index)`, numbering the
// groups in order of their first index; `of[index]` gets its group.
template <typename Key>
std::vector<std::vector<int>> group_by(int count, const std::vector<bool>& banned, Key key, std::vector<int>& of) {
  std::map<std::vector<int64_t>, int> seen;
  std::vector<std::vector<int>> members;
  of.assign(count, -1);
  for (int i = 0; i < count; ++i) {
    if (banned[i]) continue;
    auto [it, fresh] = seen.emplace(key(i), static_cast<int>(members.size()));
    if (fresh) members.emplace_back();
    members[it->second].push_back(i);
    of[i] = it->second;
  }
  return members;
}

}  // namespace

std::vector<bool> banned_strategies(const ProblemNode& node) {
  std::vector<bool> banned;
  for (int64_t c : node.costs) banned.push_back(c >= kForbidden);
  return banned;
}

EdgeClasses edge_classes(const Problem& problem, const ProblemEdge& edge, const std::vector<bool>& banned_from,
                         const std::vector<bool>& banned_to) {
  const int rows = problem.nodes[edge.from].size();
  const int cols = problem.nodes[edge.to].size();
  auto at = [&](int r, int c) { return edge.costs[static_cast<std::size_t>(r) * cols + c]; };
  EdgeClasses out;
  out.row_members = group_by(
      rows, banned_from,
      [&](int r) {
        std::vector<int64_t> row;
        for (int c = 0; c < cols; ++c) {
          if (!banned_to[c]) row.push_back(at(r, c));
        }
        return row;
      },
      out.row_class);
  // Rows of one class are equal, so one member per class tells a column.
  out.col_members = group_by(
      cols, banned_to,
      [&](int c) {
        std::vector<int64_t> column;
        for (const auto& members : out.row_members) column.push_back(at(members.front(), c));
        return column;
      },
      out.col_class);
  for (const auto& r : out.row_members) {
    for (const auto& c : out.col_members) out.costs.push_back(at(r.front(), c.front()));
  }
  return out;
}

long encoded_terms(const EdgeClasses& classes) {
  const std::size_t cols = classes.col_members.size();
  std::vector<char> row_used(classes.row_members.size(), 0), col_used(cols, 0);
  long terms = 0;
  for (std::size_t k = 0; k < classes.costs.size(); ++k) {
    if (classes.costs[k] == 0) continue;
    ++terms;
    row_used[k / cols] = col_used[k % cols] = 1;
  }
  // A class literal of several members is linked to each of them.
  auto links = [](const std::vector<std::vector<int>>& members, const std::vector<char>& used) {
    long n = 0;
    for (std::size_t k = 0; k < members.size(); ++k) n += (used[k] && members[k].size() > 1) ? static_cast<long>(members[k].size()) : 0;
    return n;
  };
  return terms + links(classes.row_members, row_used) + links(classes.col_members, col_used);
}

}  // namespace shardsynth::synth
