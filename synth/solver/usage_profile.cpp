#include "synth/solver/usage_profile.hpp"

#include <algorithm>
#include <climits>

namespace shardsynth::synth {

UsageProfile::UsageProfile(int slots) : UsageProfile(std::vector<int64_t>(static_cast<std::size_t>(std::max(slots, 0)), 0)) {}

UsageProfile::UsageProfile(const std::vector<int64_t>& base) : slots_(static_cast<int>(base.size())) {
  tree_.assign(4 * std::max<std::size_t>(base.size(), 1), 0);
  lazy_.assign(tree_.size(), 0);
  if (slots_ > 0) build(1, 0, slots_, base);
}

void UsageProfile::build(int node, int lo, int hi, const std::vector<int64_t>& base) {
  if (hi - lo == 1) {
    tree_[node] = base[lo];
    return;
  }
  const int mid = (lo + hi) / 2;
  build(2 * node, lo, mid, base);
  build(2 * node + 1, mid, hi, base);
  tree_[node] = std::max(tree_[2 * node], tree_[2 * node + 1]);
}

void UsageProfile::add(int from, int to, int64_t delta) {
  from = std::max(from, 0);
  to = std::min(to, slots_);
  if (from >= to || delta == 0) return;
  add(1, 0, slots_, from, to, delta);
}

// Lazy values are never pushed down: a node's value is its children's
// maximum plus its own pending addition, so reads add the pending values on
// the path instead.
void UsageProfile::add(int node, int lo, int hi, int from, int to, int64_t delta) {
  if (from <= lo && hi <= to) {
    tree_[node] += delta;
    lazy_[node] += delta;
    return;
  }
  const int mid = (lo + hi) / 2;
  if (from < mid) add(2 * node, lo, mid, from, to, delta);
  if (to > mid) add(2 * node + 1, mid, hi, from, to, delta);
  tree_[node] = std::max(tree_[2 * node], tree_[2 * node + 1]) + lazy_[node];
}

int64_t UsageProfile::max(int from, int to) const {
  from = std::max(from, 0);
  to = std::min(to, slots_);
  if (from >= to) return INT64_MIN;
  return max(1, 0, slots_, from, to);
}

int64_t UsageProfile::max(int node, int lo, int hi, int from, int to) const {
  if (from <= lo && hi <= to) return tree_[node];
  const int mid = (lo + hi) / 2;
  int64_t best = INT64_MIN;
  if (from < mid) best = std::max(best, max(2 * node, lo, mid, from, to));
  if (to > mid) best = std::max(best, max(2 * node + 1, mid, hi, from, to));
  return best + lazy_[node];
}

int UsageProfile::first_above(int from, int to, int64_t limit) const {
  from = std::max(from, 0);
  to = std::min(to, slots_);
  if (from >= to) return -1;
  return first_above(1, 0, slots_, from, to, limit);
}

int UsageProfile::first_above(int node, int lo, int hi, int from, int to, int64_t limit) const {
  if (tree_[node] <= limit) return -1;
  if (hi - lo == 1) return lo;
  const int mid = (lo + hi) / 2;
  // Children's values exclude this node's pending addition: shift the limit instead.
  const int64_t below = limit - lazy_[node];
  if (from < mid) {
    const int left = first_above(2 * node, lo, mid, from, to, below);
    if (left >= 0) return left;
  }
  if (to > mid) return first_above(2 * node + 1, mid, hi, from, to, below);
  return -1;
}

std::vector<int64_t> UsageProfile::values() const {
  std::vector<int64_t> out;
  out.reserve(static_cast<std::size_t>(slots_));
  if (slots_ > 0) collect(1, 0, slots_, 0, out);
  return out;
}

void UsageProfile::collect(int node, int lo, int hi, int64_t pending, std::vector<int64_t>& out) const {
  if (hi - lo == 1) {
    out.push_back(tree_[node] + pending);
    return;
  }
  const int mid = (lo + hi) / 2;
  collect(2 * node, lo, mid, pending + lazy_[node], out);
  collect(2 * node + 1, mid, hi, pending + lazy_[node], out);
}

}  // namespace shardsynth::synth
