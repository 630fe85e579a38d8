#include "synth/solver/repair_polish.hpp"

#include <algorithm>

namespace shardsynth::synth {

NeighbourhoodOutcome repair_and_polish(NeighbourhoodContext& context, LocalSearch& search) {
  NeighbourhoodOutcome out;
  const int n = static_cast<int>(context.folded.kernel.nodes.size());
  out.work = n;  // the repair's scan of the live nodes
  if (!search.feasible() && !search.repair(&context.penalty, 4 * n, context.deadline)) return out;
  std::shuffle(context.order.begin(), context.order.end(), context.rng);
  out.work += search.descend(context.order, nullptr, true) + n;
  out.improved = context.offer(search.assignment(), false);
  return out;
}

NeighbourhoodOutcome RepairPolish::apply(NeighbourhoodContext& context) {
  const Assignment proposal = context.proposal.assignment();
  const NeighbourhoodOutcome out = repair_and_polish(context, context.proposal);
  context.proposal.set(proposal);
  return out;
}

}  // namespace shardsynth::synth
