#include "synth/memory_figures.hpp"

#include "costs/param_storage.hpp"
#include "synth/liveness.hpp"
#include "synth/recompute.hpp"

namespace shardsynth::synth {

std::string step_name(const Lowered& lowered, int64_t step) {
  const StepClock clock{lowered.options.mode, static_cast<int64_t>(lowered.order.size())};
  const int64_t n = clock.nodes;
  if (step < n) return "forward of " + lowered.graph.node(lowered.order[step]).name;
  if (step < 2 * n) return "backward of " + lowered.graph.node(lowered.order[2 * n - 1 - step]).name;
  return "optimizer";
}

ir::ScheduleMemory memory_figures(const Lowered& lowered, const Assignment& assignment) {
  ir::ScheduleMemory m;
  const ir::Graph& graph = lowered.graph;
  for (ir::Vertex v : lowered.order) {
    const ir::Node& node = graph.node(v);
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      if (!node.params[p].tied_to.empty()) continue;  // held by the parameter it is tied to
      if (const auto held = storage_choice(lowered, assignment, v, static_cast<int>(p))) {
        const auto bytes = costs::storage_bytes(node.params[p].type, held->storage, lowered.mesh, lowered.options.precision);
        m.zero_stages.resize(4, 0);
        m.zero_stages[held->only ? 0 : held->stage] += ir::num_elements(node.params[p].type.shape);
        m.params += bytes.param;
        m.grads += bytes.grad;
        m.optimizer += bytes.state;
        continue;
      }
      const ir::Spec& spec = param_spec(lowered, v, static_cast<int>(p), assignment[lowered.owner[v]]);
      m.params += costs::param_bytes(lowered.options.mode, node.params[p].type, spec, lowered.mesh, lowered.options.precision);
    }
  }
  for (int n : recomputed_nodes(lowered, assignment)) {
    ++m.recomputed_ops;
    m.recomputed += lowered.problem.nodes[n].usages[assignment[n]];
  }
  const UsagePeak peak = peak_usage(lowered.problem, assignment);
  m.peak = peak.bytes;
  m.peak_step = peak.step;
  m.peak_at = step_name(lowered, peak.step);
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    const ProblemNode& node = lowered.problem.nodes[n];
    if (lowered.nodes[n].holds == FollowerKind::gathered && node.live_from <= peak.step && peak.step < node.live_to) {
      m.transient += node.usages[assignment[n]];
    }
  }
  m.activations = m.peak - m.params - m.grads - m.optimizer - m.transient;
  return m;
}

}  // namespace shardsynth::synth
