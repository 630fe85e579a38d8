#include "synth/solver/narrowing.hpp"

#include "synth/solver/dual_bound.hpp"
#include "synth/solver/reduced_cost_fixing.hpp"

namespace shardsynth::synth {

Narrowed narrow(const Problem& kernel, int64_t offset, std::optional<int64_t> bound, bool prune,
                std::optional<std::chrono::steady_clock::time_point> deadline, const LpRelaxation* lp) {
  Narrowed n;
  n.constant = offset;
  if (!prune || !bound) {
    n.chain.push_back(identity_reduction(kernel));
    n.problem = kernel;
    return n;
  }
  Problem current = kernel;
  if (lp) fix_by_reduced_cost(current, *lp, *bound - n.constant);  // the LP's reduced costs at the bound
  for (int round = 0;; ++round) {
    n.chain.push_back(reduce(prune_at_gap(current, *bound - n.constant)));
    const Reduced& last = n.chain.back();
    if (last.constant >= kForbidden || n.constant + last.constant >= *bound) {
      n.empty = true;
      return n;
    }
    n.constant += last.constant;
    current = last.kernel;
    if (round == 2 || current.nodes.empty()) break;
    DualOptions dual;
    dual.max_passes = 40;
    dual.deadline = deadline;
    dual.decode = false;  // only the bound is used here
    DualBound d = reparameterize(current, dual);
    if (d.constant >= kForbidden || n.constant + d.constant >= *bound) {
      n.empty = true;
      return n;
    }
    current = std::move(d.problem);
    n.constant += d.constant;
    if (d.constant == 0) break;  // the bound did not move: pruning again changes nothing
  }
  n.problem = std::move(current);
  return n;
}

Assignment expand_narrowed(const Narrowed& narrowed, Assignment kernel_assignment) {
  for (auto r = narrowed.chain.rbegin(); r != narrowed.chain.rend(); ++r) kernel_assignment = expand(*r, kernel_assignment);
  return kernel_assignment;
}

}  // namespace shardsynth::synth
