#include "synth/solver/cost_network.hpp"

#include <algorithm>
#include <cstdint>

#include "synth/solver/interrupt.hpp"

namespace shardsynth::synth {
namespace {

// Lagrangian passes over the priced rows per propagation: each pass that
// lifts the floor makes the next one worth trying, but their gains shrink.
constexpr int kPricingPasses = 2;

// Propagation looks at the clock once per this many queue entries,
// variables or rows (each a complete move: the network stays valid).
constexpr int kClockEvery = 64;

using Multiplier = CostNetwork::Multiplier;

// The largest multiplier numerator a step may reach (int64 with room).
constexpr __int128 kMaxMultiplier = INT64_MAX / 4;

// One point where a member's cheapest value (under unary + lambda * usage)
// moves to a lighter one as lambda grows.
struct Breakpoint {
  Multiplier at;     // the lambda where the move happens
  int64_t drop = 0;  // usage saved by the move, bytes
};

bool earlier(const Breakpoint& x, const Breakpoint& y) {
  const __int128 l = static_cast<__int128>(x.at.num) * y.at.den;
  const __int128 r = static_cast<__int128>(y.at.num) * x.at.den;
  return l < r;
}

}  // namespace

CostNetwork::CostNetwork(const Problem& kernel, std::vector<KnapsackRow> rows, RowMultipliers multipliers, int64_t cutoff)
    : rows_(std::move(rows)), cutoff_(cutoff) {
  const int n = static_cast<int>(kernel.nodes.size());
  first_.resize(n);
  size_.resize(n);
  live_count_.resize(n);
  std::size_t values = 0;
  for (int i = 0; i < n; ++i) {
    first_[i] = values;
    size_[i] = kernel.nodes[i].size();
    values += size_[i];
  }
  unary_.resize(values);
  live_.assign(values, 1);
  for (int i = 0; i < n; ++i) {
    const auto& node = kernel.nodes[i];
    for (int v = 0; v < size_[i]; ++v) {
      const std::size_t at = first_[i] + v;
      unary_[at] = node.costs[v];
      if (node.costs[v] >= kForbidden) live_[at] = 0;
    }
    live_count_[i] = std::count(live_.begin() + first_[i], live_.begin() + first_[i] + size_[i], 1);
  }
  arcs_.resize(n);
  for (const auto& pe : kernel.edges) {
    Edge e;
    e.a = pe.from;
    e.b = pe.to;
    e.table = tables_.size();
    tables_.insert(tables_.end(), pe.costs.begin(), pe.costs.end());
    e.delta_a = deltas_.size();
    deltas_.resize(deltas_.size() + size_[e.a], 0);
    e.delta_b = deltas_.size();
    deltas_.resize(deltas_.size() + size_[e.b], 0);
    arcs_[e.a].push_back({static_cast<int>(edges_.size()), true});
    arcs_[e.b].push_back({static_cast<int>(edges_.size()), false});
    edges_.push_back(e);
  }
  rows_of_.resize(n);
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    for (const int i : rows_[r].vars) rows_of_[i].push_back(r);
  }
  priced_.assign(rows_.size(), 0);
  multiplier_ = multipliers.q.empty() ? std::vector<int64_t>(rows_.size(), 0) : std::move(multipliers.q);
  multiplier_den_ = multipliers.den;
  row_dirty_.assign(rows_.size(), 1);
  queued_.assign(n, 1);
  for (int i = 0; i < n; ++i) queue_.push_back(i);
}

void CostNetwork::price_rows(const std::vector<int>& rows) {
  for (const int r : rows) priced_[r] = 1;
}

void CostNetwork::set(int64_t& slot, int64_t value) {
  trail_.emplace_back(&slot, slot);
  slot = value;
}

void CostNetwork::restore(std::size_t mark) {
  while (trail_.size() > mark) {
    *trail_.back().first = trail_.back().second;
    trail_.pop_back();
  }
  for (const int i : queue_) queued_[i] = 0;
  queue_.clear();
}

int64_t CostNetwork::pair_cost(const Edge& e, int va, int vb) const {
  const int64_t t = tables_[e.table + static_cast<std::size_t>(va) * size_[e.b] + vb];
  if (t >= kForbidden) return kForbidden;
  return t - deltas_[e.delta_a + va] - deltas_[e.delta_b + vb];
}

bool CostNetwork::kill(int var, int value) {
  int64_t& slot = live_[first_[var] + value];
  if (slot == 0) return true;
  set(slot, 0);
  set(live_count_[var], live_count_[var] - 1);
  for (const int r : rows_of_[var]) row_dirty_[r] = 1;
  if (!queued_[var]) {
    queued_[var] = 1;
    queue_.push_back(var);
  }
  return live_count_[var] > 0;
}

// Moves each live value's cheapest pair on the arc's edge onto the value;
// values without a pair die. Then normalizes the variable.
bool CostNetwork::revise(int var, const Arc& arc) {
  const Edge& e = edges_[arc.edge];
  const int other = arc.is_a ? e.b : e.a;
  work_ += static_cast<long>(live_count_[var]) * size_[other];
  const std::size_t own_delta = arc.is_a ? e.delta_a : e.delta_b;
  bool raised = false;
  for (int v = 0; v < size_[var]; ++v) {
    if (!live_[first_[var] + v]) continue;
    int64_t least = kForbidden;
    for (int w = 0; w < size_[other]; ++w) {
      if (!live_[first_[other] + w]) continue;
      least = std::min(least, arc.is_a ? pair_cost(e, v, w) : pair_cost(e, w, v));
      if (least == 0) break;
    }
    if (least >= kForbidden) {
      if (!kill(var, v)) return false;
    } else if (least > 0) {
      set(deltas_[own_delta + v], deltas_[own_delta + v] + least);
      set(unary_[first_[var] + v], unary_[first_[var] + v] + least);
      raised = true;
    }
  }
  return !raised || normalize(var);
}

// Moves the variable's cheapest unary cost into the floor and drops the
// values that reach the cutoff.
bool CostNetwork::normalize(int var) { return shift_to_floor(var) && prune(var); }

// Moves the variable's cheapest unary cost (which may be negative) into the
// floor; false when no value is live.
bool CostNetwork::shift_to_floor(int var) {
  const std::size_t at = first_[var];
  work_ += size_[var];
  int64_t least = kForbidden;
  for (int v = 0; v < size_[var]; ++v) {
    if (live_[at + v]) least = std::min(least, unary_[at + v]);
  }
  if (least >= kForbidden) return false;
  if (least != 0) {
    for (int v = 0; v < size_[var]; ++v) {
      if (live_[at + v]) set(unary_[at + v], unary_[at + v] - least);
    }
    set(floor_, floor_ + least);
  }
  return true;
}

// Drops the variable's values whose unary cost lifts the floor to the
// cutoff (every other term being at least zero).
bool CostNetwork::prune(int var) {
  if (floor_ >= cutoff_) return false;
  const std::size_t at = first_[var];
  for (int v = 0; v < size_[var]; ++v) {
    if (live_[at + v] && floor_ + unary_[at + v] >= cutoff_ && !kill(var, v)) return false;
  }
  return true;
}

bool CostNetwork::prune_all() {
  if (floor_ >= cutoff_) return false;
  work_ += static_cast<long>(unary_.size());
  for (int i = 0; i < variables(); ++i) {
    const std::size_t at = first_[i];
    for (int v = 0; v < size_[i]; ++v) {
      if (live_[at + v] && floor_ + unary_[at + v] >= cutoff_ && !kill(i, v)) return false;
    }
  }
  return true;
}

// Revises the edges of every variable that lost values, until none did;
// first its cheapest remaining value's cost goes into the floor (a lost
// value may have been its only free one).
bool CostNetwork::drain() {
  for (int popped = 1; !queue_.empty(); ++popped) {
    if (popped % kClockEvery == 0 && due()) return true;
    const int j = queue_.back();
    queue_.pop_back();
    queued_[j] = 0;
    if (!normalize(j)) return false;
    for (const Arc& arc : arcs_[j]) {
      const Edge& e = edges_[arc.edge];
      const int i = arc.is_a ? e.b : e.a;
      if (!revise(i, Arc{arc.edge, !arc.is_a})) return false;
    }
  }
  return true;
}

bool CostNetwork::fit_rows() {
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    if (r % kClockEvery == kClockEvery - 1 && due()) return true;
    if (row_dirty_[r] && !fit_row(r)) return false;
  }
  return true;
}

// Drops the values a row has no room for, with the other members at their lightest.
bool CostNetwork::fit_row(int row) {
  row_dirty_[row] = 0;
  const KnapsackRow& r = rows_[row];
  for (const int i : r.vars) work_ += 2L * size_[i];
  std::vector<int64_t> lightest(r.vars.size());
  int64_t lightest_sum = 0;
  for (std::size_t m = 0; m < r.vars.size(); ++m) {
    lightest[m] = lightest_weight(row, m);
    lightest_sum += lightest[m];
  }
  const int64_t slack = r.capacity - lightest_sum;
  if (slack < 0) return false;
  for (std::size_t m = 0; m < r.vars.size(); ++m) {
    const int i = r.vars[m];
    for (int v = 0; v < size_[i]; ++v) {
      if (live_[first_[i] + v] && r.weights[m][v] - lightest[m] > slack && !kill(i, v)) return false;
    }
  }
  return true;
}

// The members' cheapest values under unary + t * weight as t moves from 0
// in `direction` (+1: toward lighter values, -1: toward heavier ones):
// the t (cost per byte) where their weights stop overflowing the capacity
// (+1) or stop leaving room (-1); unset when they never do.
std::optional<Multiplier> CostNetwork::turning_point(int row, int direction) const {
  const KnapsackRow& r = rows_[row];
  int64_t excess = direction > 0 ? -r.capacity : r.capacity;
  std::vector<Breakpoint> points;
  for (std::size_t m = 0; m < r.vars.size(); ++m) {
    const int i = r.vars[m];
    const std::size_t at = first_[i];
    const auto& w = r.weights[m];
    work_ += static_cast<long>(size_[i]) * size_[i];
    // the cheapest value, ties toward the direction's end
    int cur = -1;
    for (int v = 0; v < size_[i]; ++v) {
      if (!live_[at + v]) continue;
      if (cur < 0 || unary_[at + v] < unary_[at + cur] ||
          (unary_[at + v] == unary_[at + cur] && direction * (w[cur] - w[v]) > 0)) {
        cur = v;
      }
    }
    excess += direction * w[cur];
    while (true) {  // walk the lower hull toward the direction's end
      int next = -1;
      Multiplier best;
      for (int v = 0; v < size_[i]; ++v) {
        const int64_t saved = direction * (w[cur] - w[v]);
        if (!live_[at + v] || saved <= 0) continue;
        const Multiplier m{unary_[at + v] - unary_[at + cur], saved};
        if (next < 0 || earlier(Breakpoint{m, 0}, Breakpoint{best, 0}) ||
            (!earlier(Breakpoint{best, 0}, Breakpoint{m, 0}) && direction * (w[next] - w[v]) > 0)) {
          next = v;
          best = m;
        }
      }
      if (next < 0) break;
      points.push_back({best, direction * (w[cur] - w[next])});
      cur = next;
    }
  }
  if (excess <= 0) return Multiplier{0, 1};
  std::sort(points.begin(), points.end(), earlier);
  for (const auto& p : points) {
    excess -= p.drop;
    if (excess <= 0) return p.at;
  }
  return std::nullopt;
}

// One Lagrangian step on a row: its multiplier moves to the turning point
// (up when the cheapest values overflow, down when they leave room), kept
// when the floor rises by it.
bool CostNetwork::price_row(int row, bool* moved) {
  const KnapsackRow& r = rows_[row];
  const int64_t q_old = multiplier_[row];
  int64_t q_new = q_old;
  const auto up = turning_point(row, +1);
  if (!up) return false;  // even the lightest values overflow
  if (up->num > 0) {
    const __int128 q = q_old + static_cast<__int128>(up->num) * multiplier_den_ / up->den;
    if (q > kMaxMultiplier) return true;  // a step this steep would overflow the costs; leave the row
    q_new = static_cast<int64_t>(q);
  } else if (q_old > 0) {
    const auto down = turning_point(row, -1);
    const __int128 drop = down ? static_cast<__int128>(down->num) * multiplier_den_ / down->den : q_old;
    if (down && down->num == 0) return true;
    q_new = drop >= q_old ? 0 : q_old - static_cast<int64_t>(drop);
  }
  if (q_new == q_old || penalty(q_new, r.capacity, multiplier_den_) > kForbidden / 4) return true;
  const auto change = [&](int64_t bytes) {
    return penalty(q_new, bytes, multiplier_den_) - penalty(q_old, bytes, multiplier_den_);
  };
  for (const int i : r.vars) work_ += 2L * size_[i];
  int64_t gain = -change(r.capacity);
  for (std::size_t m = 0; m < r.vars.size(); ++m) {
    const int i = r.vars[m];
    int64_t least = kForbidden;
    for (int v = 0; v < size_[i]; ++v) {
      if (live_[first_[i] + v]) least = std::min(least, unary_[first_[i] + v] + change(r.weights[m][v]));
    }
    gain += least;
  }
  if (gain <= 0) return true;
  set(multiplier_[row], q_new);
  for (std::size_t m = 0; m < r.vars.size(); ++m) {
    const int i = r.vars[m];
    for (int v = 0; v < size_[i]; ++v) {
      const std::size_t at = first_[i] + v;
      if (live_[at]) set(unary_[at], unary_[at] + change(r.weights[m][v]));
    }
  }
  set(floor_, floor_ - change(r.capacity));
  // every member's unary costs back to minimum 0 before any pruning: while
  // one still has a negative minimum, the floor overstates the bound
  for (const int i : r.vars) {
    if (!shift_to_floor(i)) return false;
  }
  for (const int i : r.vars) {
    if (!prune(i)) return false;
  }
  *moved = true;
  return floor_ < cutoff_;
}

// Full directional support of the edge's earlier end (lower index) on its
// later end: each earlier value's cheapest pair, counting the later end's
// unary cost, is moved onto the earlier value, the unary costs it needs
// first extended from the later end into the edge (never more than a
// value has, so every term stays at least zero).
bool CostNetwork::full_support(int edge) {
  const Edge& e = edges_[edge];
  const bool a_first = e.a < e.b;
  const int i = a_first ? e.a : e.b;
  const int j = a_first ? e.b : e.a;
  const std::size_t delta_i = a_first ? e.delta_a : e.delta_b;
  const std::size_t delta_j = a_first ? e.delta_b : e.delta_a;
  const auto cost = [&](int vi, int vj) { return a_first ? pair_cost(e, vi, vj) : pair_cost(e, vj, vi); };
  work_ += 2L * live_count_[i] * size_[j];
  need_.assign(size_[i], 0);
  bool any = false;
  for (int a = 0; a < size_[i]; ++a) {
    if (!live_[first_[i] + a]) continue;
    int64_t least = kForbidden;
    for (int b = 0; b < size_[j] && least > 0; ++b) {
      if (!live_[first_[j] + b]) continue;
      const int64_t c = cost(a, b);
      if (c < kForbidden) least = std::min(least, c + unary_[first_[j] + b]);
    }
    if (least < kForbidden && least > 0) {
      need_[a] = least;
      any = true;
    }
  }
  if (!any) return true;
  for (int b = 0; b < size_[j]; ++b) {
    const std::size_t at = first_[j] + b;
    if (!live_[at]) continue;
    int64_t extend = 0;
    for (int a = 0; a < size_[i]; ++a) {
      if (need_[a] == 0 || !live_[first_[i] + a]) continue;
      const int64_t c = cost(a, b);
      if (c < kForbidden) extend = std::max(extend, need_[a] - c);
    }
    extend = std::min(extend, unary_[at]);
    if (extend > 0) {
      set(deltas_[delta_j + b], deltas_[delta_j + b] - extend);
      set(unary_[at], unary_[at] - extend);
    }
  }
  for (int a = 0; a < size_[i]; ++a) {
    if (need_[a] == 0) continue;
    set(deltas_[delta_i + a], deltas_[delta_i + a] + need_[a]);
    set(unary_[first_[i] + a], unary_[first_[i] + a] + need_[a]);
  }
  return normalize(i);
}

// Directional arc consistency: every edge's full support, the later
// variables first, so that costs flow toward the first variable and into
// the floor.
bool CostNetwork::direct_costs() {
  for (int j = variables() - 1; j >= 0; --j) {
    if (j % kClockEvery == 0 && due()) return true;
    for (const Arc& arc : arcs_[j]) {
      const Edge& e = edges_[arc.edge];
      if (std::max(e.a, e.b) == j && !full_support(arc.edge)) return false;
    }
  }
  return true;
}

bool CostNetwork::propagate() {
  if (!started_) {
    started_ = true;
    for (int i = 0; i < variables(); ++i) {
      if (!normalize(i)) return false;
    }
  }
  int passes = 0;
  while (true) {
    if (due()) return true;  // stopped short: the floor is still a bound, only a lower one
    if (!drain() || !prune_all()) return false;
    if (!queue_.empty()) continue;
    if (!fit_rows()) return false;
    if (!queue_.empty()) continue;
    if (passes >= kPricingPasses) return true;
    ++passes;
    const int64_t before = floor_;
    if (!direct_costs()) return false;
    if (!queue_.empty() || floor_ != before) continue;
    bool moved = false;
    for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
      if (r % kClockEvery == kClockEvery - 1 && due()) return true;
      if (priced_[r] && !price_row(r, &moved)) return false;
    }
    if (!moved && queue_.empty()) return true;
  }
}

bool CostNetwork::due() {
  if (!interrupted_ && ((deadline_ && std::chrono::steady_clock::now() >= *deadline_) || interrupt_requested())) {
    interrupted_ = true;
  }
  return interrupted_;
}

bool CostNetwork::assign(int var, int value) {
  for (int v = 0; v < size_[var]; ++v) {
    if (v != value && !kill(var, v)) return false;
  }
  return live_[first_[var] + value] && normalize(var) && propagate();
}

bool CostNetwork::remove(int var, int value) { return kill(var, value) && propagate(); }

int CostNetwork::cheapest(int var) const {
  const std::size_t at = first_[var];
  int best = -1;
  for (int v = 0; v < size_[var]; ++v) {
    if (live_[at + v] && (best < 0 || unary_[at + v] < unary_[at + best])) best = v;
  }
  return best;
}

int64_t CostNetwork::lightest_weight(int row, std::size_t member) const {
  const KnapsackRow& r = rows_[row];
  const int i = r.vars[member];
  int64_t lightest = kForbidden;
  for (int v = 0; v < size_[i]; ++v) {
    if (live_[first_[i] + v]) lightest = std::min(lightest, r.weights[member][v]);
  }
  return lightest;
}

}  // namespace shardsynth::synth
