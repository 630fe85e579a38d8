#include "synth/solver/network_cutoffs.hpp"

#include <algorithm>

namespace shardsynth::synth {
namespace {

// Adds a try's counts to the total; its plan, if any, becomes the best.
void absorb(NetworkSearch& total, const NetworkSearch& part) {
  total.nodes += part.nodes;
  total.work += part.work;
  total.ms += part.ms;
  if (!part.plan.empty()) {
    total.plan = part.plan;
    total.incumbent = part.incumbent;
  }
}

}  // namespace

NetworkSearch search_network_by_cutoffs(const NetworkInput& input, int64_t incumbent, const Assignment& hint,
                                        const NetworkSearchOptions& options,
                                        const std::function<void(const Assignment&, int64_t)>& on_plan) {
  if (incumbent >= kForbidden) return search_network(input, incumbent, hint, options, on_plan);
  // the root alone: its floor, the first proven bound
  NetworkSearchOptions root_only = options;
  root_only.max_work = 1;
  NetworkSearch total = search_network(input, incumbent, hint, root_only, on_plan);
  if (total.outcome == "closed") return total;
  total.outcome = "not run";
  int64_t proven = total.root_bound;
  int64_t step = std::max<int64_t>(1, (incumbent - proven) / kFirstCutoffShare);
  Assignment best_hint = hint;
  while (true) {
    NetworkSearchOptions left = options;
    if (options.stop_at_work) {  // the hook sees the work of every try so far
      left.stop_at_work = [&options, done = total.work](long work) { return options.stop_at_work(done + work); };
    }
    if (options.max_work > 0) {
      left.max_work = options.max_work - total.work;
      if (left.max_work <= 0) {
        total.outcome = "work limit";
        break;
      }
    }
    const int64_t cutoff = std::min(proven + step, total.incumbent);
    const bool last = cutoff >= total.incumbent;
    const NetworkSearch part = search_network(input, cutoff, best_hint, left, on_plan);
    absorb(total, part);
    if (!part.plan.empty()) best_hint = part.plan;
    if (part.outcome != "closed") {  // cut short: its root's floor still bounds every plan
      proven = std::max(proven, std::min(part.root_bound, total.incumbent));
      total.outcome = part.outcome;
      break;
    }
    if (last || !part.plan.empty()) {  // nothing below the plan found, or below the incumbent
      total.outcome = "closed";
      break;
    }
    proven = cutoff;  // no plan below the cutoff
    step *= 2;
  }
  total.root_bound = std::max(total.root_bound, std::min(proven, total.incumbent));
  return total;
}

}  // namespace shardsynth::synth
