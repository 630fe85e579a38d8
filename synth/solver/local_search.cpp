#include "synth/solver/local_search.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace shardsynth::synth {

LocalSearch::LocalSearch(const FoldedProblem& folded)
    : folded_(folded), kernel_(folded.kernel), limit_(folded.usage_limit), incidences_(incidence_lists(folded.kernel)) {
  const int slots = static_cast<int>(folded.base.size());
  cover_.assign(2 * static_cast<std::size_t>(std::max(slots, 1)), {});
  stamp_.assign(kernel_.nodes.size(), 0);
  for (std::size_t u = 0; u < folded.pieces.size(); ++u) {
    for (const auto& p : folded.pieces[u]) {
      for (int l = p.from + slots, r = p.to + slots; l < r; l >>= 1, r >>= 1) {
        if (l & 1) cover_[l++].push_back(static_cast<int>(u));
        if (r & 1) cover_[--r].push_back(static_cast<int>(u));
      }
    }
  }
}

std::vector<int> LocalSearch::covering(int slot) {
  ++query_;
  std::vector<int> out;
  for (int i = slot + static_cast<int>(folded_.base.size()); i >= 1; i >>= 1) {
    for (int u : cover_[i]) {
      if (stamp_[u] != query_) stamp_[u] = query_, out.push_back(u);
    }
  }
  std::sort(out.begin(), out.end());  // a fixed order, whatever the tree's
  return out;
}

void LocalSearch::set(const Assignment& x) {
  x_ = x;
  profile_ = UsageProfile(usage_profile_of(folded_, x_));
}

int64_t LocalSearch::cost() const { return cost_without_usage(kernel_, x_); }

int64_t LocalSearch::local_cost(int u, int s) const {
  int64_t c = kernel_.nodes[u].costs[s];
  if (c >= kForbidden) return kForbidden;
  for (const auto& inc : incidences_[u]) {
    const auto& e = kernel_.edges[inc.edge];
    const std::size_t cols = kernel_.nodes[e.to].costs.size();
    const int64_t v = inc.is_from ? e.costs[s * cols + x_[inc.other]] : e.costs[x_[inc.other] * cols + s];
    c = cost_add(c, v);  // saturates: many large entries may sum past int64
    if (c >= kForbidden) return kForbidden;
  }
  return c;
}

void LocalSearch::local_costs(int u, std::vector<int64_t>& out, const std::vector<int>* leave_out) const {
  const auto& own = kernel_.nodes[u].costs;
  out.resize(own.size());
  for (std::size_t s = 0; s < own.size(); ++s) out[s] = own[s] >= kForbidden ? kForbidden : own[s];
  for (const auto& inc : incidences_[u]) {
    if (leave_out && (*leave_out)[inc.other]) continue;
    const auto& e = kernel_.edges[inc.edge];
    const std::size_t cols = kernel_.nodes[e.to].costs.size();
    const std::size_t other = static_cast<std::size_t>(x_[inc.other]);
    // u picks the row (is_from): its strategies walk a column, else a row.
    const int64_t* entry = inc.is_from ? e.costs.data() + other : e.costs.data() + other * cols;
    const std::size_t stride = inc.is_from ? cols : 1;
    for (std::size_t s = 0; s < out.size(); ++s) out[s] = cost_add(out[s], entry[s * stride]);
  }
}

bool LocalSearch::move(int u, int s, bool force) {
  const int from = x_[u];
  if (from == s) return true;
  const auto& pieces = folded_.pieces[u];
  for (const auto& p : pieces) profile_.add(p.from, p.to, p.usages[s] - p.usages[from]);
  if (!force && limit_) {
    for (const auto& p : pieces) {
      if (p.usages[s] > p.usages[from] && profile_.max(p.from, p.to) > *limit_) {
        for (const auto& q : pieces) profile_.add(q.from, q.to, q.usages[from] - q.usages[s]);
        return false;
      }
    }
  }
  x_[u] = s;
  return true;
}

long LocalSearch::descend(const std::vector<int>& order, const std::vector<std::vector<double>>* penalty, bool keep_limit,
                          int max_visits) {
  long moves = 0;
  std::vector<std::pair<double, int>> candidates;
  // A node none of whose neighbours moved since it was last scored, and
  // which then had no better strategy or took its best one, has no better
  // strategy now: it is skipped, with the same moves as scoring it. One
  // whose best move was refused at a full slot stays stale, since moves
  // elsewhere may make room for it.
  std::vector<char> stale(kernel_.nodes.size(), 1);
  for (int visit = 0; visit < max_visits; ++visit) {
    long moved = 0;
    for (int u : order) {
      const int n = kernel_.nodes[u].size();
      if (n < 2 || !stale[u]) continue;
      stale[u] = 0;
      local_costs(u, scratch_);
      auto score = [&](int s) {
        const int64_t c = scratch_[s];
        if (c >= kForbidden) return std::numeric_limits<double>::infinity();
        return static_cast<double>(c) + (penalty ? (*penalty)[u][s] : 0.0);
      };
      const double here = score(x_[u]);
      candidates.clear();
      for (int s = 0; s < n; ++s) {
        if (s == x_[u]) continue;
        const double v = score(s);
        if (strictly_below(v, here)) candidates.emplace_back(v, s);
      }
      if (candidates.empty()) continue;
      std::sort(candidates.begin(), candidates.end());
      for (const auto& [v, s] : candidates) {
        if (move(u, s, !keep_limit)) {
          ++moved;
          for (const auto& inc : incidences_[u]) stale[inc.other] = 1;
          break;
        }
        stale[u] = 1;  // a better strategy was refused
      }
    }
    moves += moved;
    if (moved == 0) break;
  }
  return moves;
}

int64_t LocalSearch::usage_at(int u, int s, int slot) const {
  int64_t sum = 0;
  for (const auto& p : folded_.pieces[u]) {
    if (p.from <= slot && slot < p.to) sum += p.usages[s];
  }
  return sum;
}

bool LocalSearch::repair(const std::vector<std::vector<double>>* penalty, int max_moves,
                         std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (!limit_) return true;
  const int nodes = static_cast<int>(kernel_.nodes.size());
  struct Candidate {
    double score;  // extra (priced) cost per byte freed at the slot
    int node;      // kernel node
    int strategy;  // its new strategy
    int fixes;     // -1, or index into `compounds`: the neighbours that move with it
  };
  std::vector<Candidate> candidates;
  std::vector<std::vector<std::pair<int, int>>> compounds;  // per compound candidate: (neighbour, strategy)
  std::vector<std::pair<int, int>> fixes;
  std::vector<char> moved(nodes, 0);
  int moves = 0;
  while (moves < max_moves) {
    const int slot = profile_.first_above(0, profile_.slots(), *limit_);
    if (slot < 0) return true;
    if (deadline && std::chrono::steady_clock::now() >= *deadline) return false;
    // Every move that frees memory at the slot, scored once; then the
    // cheapest per byte are made until the slot fits.
    candidates.clear();
    compounds.clear();
    for (int u : covering(slot)) {
      const int64_t now_used = usage_at(u, x_[u], slot);
      freed_.resize(kernel_.nodes[u].size());
      bool frees = false;  // whether any strategy of u uses less at the slot
      for (int s = 0; s < kernel_.nodes[u].size(); ++s) {
        freed_[s] = now_used - usage_at(u, s, slot);
        frees = frees || freed_[s] > 0;
      }
      if (!frees) continue;
      local_costs(u, scratch_);
      const int64_t now_cost = scratch_[x_[u]];
      const double now_pen = penalty ? (*penalty)[u][x_[u]] : 0.0;
      for (int s = 0; s < kernel_.nodes[u].size(); ++s) {
        const int64_t freed = freed_[s];
        if (freed <= 0) continue;
        const int64_t c = scratch_[s];
        if (c >= kForbidden) continue;
        const double extra = static_cast<double>(c - now_cost) + (penalty ? (*penalty)[u][s] - now_pen : 0.0);
        candidates.push_back({extra / static_cast<double>(freed), u, s, -1});
      }
    }
    // Only where no single move frees memory here: the moves forbidden
    // against a neighbour, made with the neighbours (compound_move; they
    // cost a scan of the neighbours' strategies each, too much to price on
    // every slot of problems with hundreds of strategies per node).
    if (candidates.empty()) {
      for (int u : covering(slot)) {
        const int64_t now_used = usage_at(u, x_[u], slot);
        const double now_pen = penalty ? (*penalty)[u][x_[u]] : 0.0;
        for (int s = 0; s < kernel_.nodes[u].size(); ++s) {
          if (now_used - usage_at(u, s, slot) <= 0 || local_cost(u, s) < kForbidden) continue;
          int64_t freed = 0;
          const int64_t delta = compound_move(u, s, slot, fixes, freed);
          if (delta >= kForbidden || freed <= 0) continue;
          const double extra = static_cast<double>(delta) + (penalty ? (*penalty)[u][s] - now_pen : 0.0);
          candidates.push_back({extra / static_cast<double>(freed), u, s, static_cast<int>(compounds.size())});
          compounds.push_back(fixes);
        }
      }
    }
    if (candidates.empty()) return false;
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.score != b.score ? a.score < b.score : (a.node != b.node ? a.node < b.node : a.strategy < b.strategy);
    });
    std::fill(moved.begin(), moved.end(), 0);
    bool progress = false;
    // First the moves that push no other slot over the limit, then any
    // (forcing every move made the repair chase the excess from slot to
    // slot until it ran out of moves); compound moves in the second pass.
    const std::vector<std::pair<int, int>> none;
    for (const bool force : {false, true}) {
      for (const auto& c : candidates) {
        if (profile_.at(slot) <= *limit_ || moves >= max_moves) break;
        if (moved[c.node]) continue;  // its score assumed the old neighbourhood
        const auto& with = c.fixes < 0 ? none : compounds[c.fixes];
        if (!with.empty() && !force) continue;
        if (std::any_of(with.begin(), with.end(), [&](const auto& f) { return moved[f.first] != 0; })) continue;
        if (!move(c.node, c.strategy, force)) continue;
        moved[c.node] = 1;
        for (const auto& [w, t] : with) move(w, t, true), moved[w] = 1;
        moves += 1 + static_cast<int>(with.size());
        progress = true;
      }
    }
    if (!progress) return false;
  }
  return profile_.first_above(0, profile_.slots(), *limit_) < 0;
}

}  // namespace shardsynth::synth
