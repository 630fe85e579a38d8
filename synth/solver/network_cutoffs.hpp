#pragma once
// The network search (network_search.hpp) under cutoffs that climb from its
// root's floor toward the incumbent. Depth-first branch and bound below a
// loose incumbent spends its budget far from the optimum (h1k: open after
// 8.5 s below a plan 0.06% above the optimum, closed in 606 nodes below the
// optimum + 1). Here each try searches below a cutoff C between the proven
// bound L and the incumbent U: a try that closes without a plan proves
// that every plan costs at least C (L rises to C, and the next step is
// twice as wide); one that finds a plan lowers U, and when it also closes,
// no plan is cheaper than U; one cut short by the budget ends the search,
// its root's floor a bound still; past U the last try is the plain search.
// Every try starts afresh from the root (whose floor rises with a lower
// cutoff: more values are pruned, the rows' multipliers climb) and draws
// on one budget of work.
#include <functional>

#include "synth/solver/network_search.hpp"

namespace shardsynth::synth {

// The first cutoff is L + (U - L) / kFirstCutoffShare; the step doubles
// after a try that closes without a plan.
inline constexpr int64_t kFirstCutoffShare = 16;
// Each try may use all the work and time left: capping a try at a half or
// a quarter of them (and narrowing the step after one cut short) found
// better plans on d816-t from an incumbent 19-37% above its optimum, but
// the step before the anytime search (250M values) then no longer closed
// h1k, and synth took 8.4-9.4 s to prove it instead of 1.5 s.

// As search_network, under climbing cutoffs. The result's root_bound is the
// highest bound proven (the root's floor or a closed cutoff); its nodes and
// work sum the tries'; its outcome is "closed" when no plan is cheaper
// than its incumbent.
NetworkSearch search_network_by_cutoffs(const NetworkInput& input, int64_t incumbent, const Assignment& hint,
                                        const NetworkSearchOptions& options,
                                        const std::function<void(const Assignment&, int64_t)>& on_plan = {});

}  // namespace shardsynth::synth
