// Activation recomputation: the twin strategies and saved nodes lowering
// adds, and what they cost and hold.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "ir/dtype.hpp"
#include "ir/gpt2.hpp"
#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"
#include "synth/liveness.hpp"
#include "synth/lowering.hpp"
#include "synth/random_plan.hpp"
#include "synth/recompute.hpp"
#include "synth/solver/problem.hpp"
#include "synth/test_graphs.hpp"
#include "tiny_gpt2.hpp"

namespace shardsynth::synth {
namespace {

ir::Graph small_gpt2(int layers) { return testing::tiny_gpt2(layers); }

// What one plan holds at each time step, from the graph, the specs and the
// recompute and storage choices alone: each problem node's tensors are live
// from its first forward to its last backward, except that a recomputed
// node's are dropped after their last forward read and live again from its
// segment's recompute step (the backward of the segment's last node); a
// parameter's storage the whole step; a parameter read in another spec than
// it is stored in, and a tied use's copy, held in the use's spec at its
// op's forward and at its backward.
int64_t simulated_peak(const Lowered& lowered, const Assignment& a) {
  const ir::Graph& graph = lowered.graph;
  const auto order = graph.topological_order();
  const auto n = static_cast<int64_t>(order.size());
  const int64_t steps = 2 * n + 1;
  std::map<ir::Vertex, int64_t> at;
  for (int64_t i = 0; i < n; ++i) at[order[i]] = i;
  const ir::RecomputeSegments segments = ir::recompute_segments(graph, order);
  std::vector<int64_t> live(steps, 0);
  auto hold = [&](int64_t from, int64_t to, int64_t bytes) {
    for (int64_t t = from; t < to; ++t) live[t] += bytes;
  };
  for (std::size_t k = 0; k < lowered.nodes.size(); ++k) {
    const NodeLabel& label = lowered.nodes[k];
    if (label.role == NodeRole::follower) continue;
    if (label.role == NodeRole::storage) {
      hold(0, steps, lowered.problem.nodes[k].usages[a[k]]);
      continue;
    }
    int64_t bytes = 0, first = steps, last_backward = 0, last_read = 0;
    for (ir::Vertex v : order) {
      if (lowered.owner[v] != static_cast<int>(k)) continue;
      bytes += costs::activation_bytes(graph.node(v).type, output_spec(lowered, a, v), lowered.mesh);
      first = std::min(first, at[v]);
      last_backward = std::max(last_backward, 2 * n - 1 - at[v]);
      last_read = std::max(last_read, at[v]);
      for (const auto& [user, operand] : graph.users_of(v)) last_read = std::max(last_read, at[user]);
    }
    if (!label.strategies[a[k]].recompute) {
      hold(first, last_backward + 1, bytes);
      continue;
    }
    const int64_t again = 2 * n - 1 - segments.segment_end[segments.segment[label.vertex]];
    hold(first, last_read + 1, bytes);
    hold(again, last_backward + 1, bytes);
  }
  for (ir::Vertex v : order) {
    const auto& params = graph.node(v).params;
    for (std::size_t p = 0; p < params.size(); ++p) {
      const ir::Spec& use = param_spec(lowered, v, static_cast<int>(p), a[lowered.owner[v]]);
      const auto held = storage_choice(lowered, a, v, static_cast<int>(p));
      if (params[p].tied_to.empty() && (!held || held->storage.stored == use)) continue;
      const ir::TensorType& type = params[p].type;
      const int64_t copy = ir::num_elements(ir::local_shape(type.shape, use, lowered.mesh)) * ir::dtype_bytes(type.dtype);
      hold(at[v], at[v] + 1, copy);
      hold(2 * n - 1 - at[v], 2 * n - at[v], copy);
    }
  }
  return *std::max_element(live.begin(), live.end());
}

}  // namespace

TEST_CASE("lower_RecomputeTwinsOnlyInTrainingUnderABudget") {
  const ir::Graph graph = small_gpt2(2);
  const ir::Mesh mesh = ir::parse_mesh("2x2");
  const auto model = costs::make_cost_model("alpha-beta");
  auto twins = [](const Lowered& lowered) {
    int count = 0;
    for (const auto& label : lowered.nodes) {
      for (const auto& s : label.strategies) count += s.recompute && label.role == NodeRole::op;
    }
    return count;
  };
  auto saved = [](const Lowered& lowered) {
    return std::count_if(lowered.nodes.begin(), lowered.nodes.end(),
                         [](const NodeLabel& l) { return l.holds == FollowerKind::saved; });
  };
  LowerOptions options;
  options.mode = costs::Mode::inference;
  options.memory_budget = int64_t{1} << 40;
  CHECK(twins(lower(graph, mesh, *model, options)) == 0);
  options.mode = costs::Mode::training;
  options.memory_budget.reset();
  CHECK(twins(lower(graph, mesh, *model, options)) == 0);
  options.memory_budget = int64_t{1} << 40;
  options.recompute = false;
  CHECK(twins(lower(graph, mesh, *model, options)) == 0);
  options.recompute = true;
  const Lowered lowered = lower(graph, mesh, *model, options);
  CHECK(twins(lowered) > 0);
  CHECK(saved(lowered) > 0);
  // A twin costs its op's forward once more; everything else is the kept strategy's.
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    const NodeLabel& label = lowered.nodes[n];
    if (label.role != NodeRole::op) continue;
    const std::size_t kept = std::count_if(label.strategies.begin(), label.strategies.end(),
                                           [](const StrategyInfo& s) { return !s.recompute; });
    for (std::size_t s = kept; s < label.strategies.size(); ++s) {
      const StrategyInfo& twin = label.strategies[s];
      REQUIRE(twin.recompute);
      const StrategyInfo& original = label.strategies[s - kept];
      CHECK(twin.output == original.output);
      CHECK(twin.operands == original.operands);
      CHECK(twin.cost.total() == original.cost.total() + twin.cost.recompute);
      CHECK(twin.cost.recompute >= twin.cost.compute / 3);
    }
  }
}

TEST_CASE("peak_usage_RecomputedPlansMatchSimulatedSteps") {
  const auto model = costs::make_cost_model("alpha-beta");
  int checked = 0, recomputing = 0, gathering = 0;
  for (const char* mesh_text : {"2", "4", "2x2"}) {
    for (int layers : {1, 2, 3}) {
      const ir::Graph graph = small_gpt2(layers);
      const ir::Mesh mesh = ir::parse_mesh(mesh_text);
      LowerOptions options;
      options.mode = costs::Mode::training;
      options.memory_budget = int64_t{1} << 40;  // offers recomputation, binds nothing
      const Lowered lowered = lower(graph, mesh, *model, options);
      for (uint64_t seed = 0; seed < 6; ++seed) {
        const Assignment a = random_assignment(lowered, seed);
        CAPTURE(mesh_text);
        CAPTURE(layers);
        CAPTURE(seed);
        const int64_t peak = simulated_peak(lowered, a);
        CHECK(peak_usage(lowered.problem, a).bytes == peak);
        CHECK(testing::limit_is_tight(lowered.problem, a, peak));
        recomputing += !recomputed_nodes(lowered, a).empty();
        int stored_apart = 0;  // parameters gathered from a storage spec apart from their use (ZeRO-3)
        for (std::size_t k = 0; k < lowered.nodes.size(); ++k) {
          const auto& choice = lowered.nodes[k].strategies[a[k]].storage;
          stored_apart += lowered.nodes[k].role == NodeRole::storage && choice->storage.stored != choice->use;
        }
        gathering += stored_apart > 0;
        ++checked;
      }
    }
  }
  MESSAGE("checked " << checked << " plans, " << recomputing << " recomputing, " << gathering
                      << " gathering parameters stored apart from their use");
  CHECK(checked == 54);
  CHECK(recomputing >= 40);  // random plans recompute some outputs almost always
  CHECK(gathering >= 20);    // and store some parameters ZeRO-3 (every plan copies the tied lm_head weight)
}

}  // namespace shardsynth::synth
