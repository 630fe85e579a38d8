#pragma once
// Memory in use over time as a profile: one value per time slot, with range
// additions and range maxima in O(log slots) each (a segment tree with lazy
// additions). The anytime solver keeps the usage of its current assignment
// here, so checking a move against the usage limit never walks the nodes
// that are live at the same time.
#include <cstdint>
#include <vector>

namespace shardsynth::synth {

class UsageProfile {
 public:
  UsageProfile() = default;
  // `slots` time slots, all at 0.
  explicit UsageProfile(int slots);
  // Slots from `base`.
  explicit UsageProfile(const std::vector<int64_t>& base);

  int slots() const { return slots_; }
  // Adds `delta` to every slot in [from, to); nothing when from >= to.
  void add(int from, int to, int64_t delta);
  // The largest slot value in [from, to); INT64_MIN when from >= to.
  int64_t max(int from, int to) const;
  // The largest slot value overall (INT64_MIN with no slots).
  int64_t max() const { return slots_ == 0 ? INT64_MIN : tree_[1]; }
  // The value of one slot.
  int64_t at(int slot) const { return max(slot, slot + 1); }
  // The first slot whose value is above `limit` within [from, to); -1 when none.
  int first_above(int from, int to, int64_t limit) const;
  // Every slot's value, in order.
  std::vector<int64_t> values() const;

 private:
  void build(int node, int lo, int hi, const std::vector<int64_t>& base);
  void add(int node, int lo, int hi, int from, int to, int64_t delta);
  int64_t max(int node, int lo, int hi, int from, int to) const;
  int first_above(int node, int lo, int hi, int from, int to, int64_t limit) const;
  void collect(int node, int lo, int hi, int64_t pending, std::vector<int64_t>& out) const;

  int slots_ = 0;
  std::vector<int64_t> tree_;  // per tree node: max of its range, its own pending addition included
  std::vector<int64_t> lazy_;  // per tree node: addition applied to its whole range, not yet pushed to children
};

}  // namespace shardsynth::synth
