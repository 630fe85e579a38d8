#include "synth/stages/stages.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "ir/error.hpp"
#include "synth/solver/problem.hpp"
#include "synth/stages/stage_cuts.hpp"
#include "synth/stages/stage_dp.hpp"
#include "synth/stages/stage_range.hpp"

namespace shardsynth::synth {

namespace {

void check_inputs(const ir::Graph& graph, const ir::Mesh& mesh, const SynthOptions& options, const StageOptions& so) {
  if (so.stages < 1) throw ir::InputError("--stages " + std::to_string(so.stages) + " must be at least 1");
  if (so.micro_batches < 1) {
    throw ir::InputError("--micro-batches " + std::to_string(so.micro_batches) + " must be at least 1");
  }
  if (mesh.shape.empty() || mesh.shape[0] != so.stages) {
    throw ir::InputError("--stages " + std::to_string(so.stages) + " needs a mesh whose axis 0 has " +
                         std::to_string(so.stages) + " groups, got mesh " + ir::mesh_string(mesh) +
                         " (e.g. --mesh " + std::to_string(so.stages) + "x2 for " + std::to_string(so.stages) +
                         " stages of 2 devices)");
  }
  if (!options.pins.empty()) throw ir::InputError("--pin and --forbid cannot be combined with --stages");
  if (options.lower.allow) throw ir::InputError("--plan cannot be combined with --stages");
  if (graph.size() == 0) throw ir::InputError("the graph has no nodes to cut into stages");
}

// Positions of `shards` that fairscale's rule starts stages at, when it gives exactly `stages` non-empty shards.
std::vector<int> fairscale_cuts(const ir::Graph& graph, const std::vector<ir::Vertex>& order, int stages, int* found) {
  const auto shards = fairscale_shards(graph, order, stages);
  const auto starts = shard_starts(shards);
  *found = static_cast<int>(starts.size()) + 1;
  return starts;
}

StagePlan build_plan(RangeSolver& solver, const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                     const StageOptions& so, const std::vector<int>& cuts) {
  const auto& order = solver.order();
  const int n = static_cast<int>(order.size());
  std::vector<int> bounds{0};
  for (int c : cuts) {
    if (c <= bounds.back() || c >= n) throw ir::InputError("stage cut at position " + std::to_string(c) + " is out of order");
    bounds.push_back(c);
  }
  bounds.push_back(n);
  if (static_cast<int>(bounds.size()) - 1 != so.stages) {
    throw ir::InputError(std::to_string(cuts.size()) + " cuts do not make " + std::to_string(so.stages) + " stages");
  }
  std::vector<int> stage_at(n, 0), pos(graph.size(), 0);
  for (int s = 0; s < so.stages; ++s) {
    for (int i = bounds[s]; i < bounds[s + 1]; ++i) stage_at[i] = s;
  }
  for (int i = 0; i < n; ++i) pos[order[i]] = i;

  StagePlan plan;
  plan.cuts = cuts;
  auto& out = plan.schedule;
  out.mesh = mesh.shape;
  out.cost_model = model.name();
  out.balance = stage_balance_name(so.balance);
  out.micro_batches = so.micro_batches;
  int64_t sum = 0;
  for (int s = 0; s < so.stages; ++s) {
    const RangeSolution& r = solver.solve(bounds[s], bounds[s + 1]);
    if (!r.feasible) {
      throw ir::InputError("stage " + std::to_string(s) + " (from node '" + graph.node(order[bounds[s]]).name +
                           "') does not fit the memory budget on its group");
    }
    ir::Stage stage;
    stage.index = s;
    for (int i = bounds[s]; i < bounds[s + 1]; ++i) {
      const ir::Node& node = graph.node(order[i]);
      stage.nodes.push_back(node.name);
      for (const auto& p : node.params) stage.params += p.tied_to.empty() ? ir::num_elements(p.type.shape) : 0;
    }
    stage.schedule = solver.schedule_for(bounds[s], bounds[s + 1]);
    stage.compute = r.compute;
    stage.communication = r.resharding;
    stage.memory = r.memory;
    for (const RangeSend& send : r.sends) {
      const int at = bounds[s] + send.offset;
      std::set<int> readers;
      for (const auto& [user, index] : graph.users_of(order[at])) {
        if (stage_at[pos[user]] > s) readers.insert(stage_at[pos[user]]);
      }
      for (int to : readers) {
        out.transfers.push_back({graph.node(order[at]).name, s, to, send.spec, send.transfer.bytes, send.transfer.cost});
        stage.communication += send.price;
      }
    }
    const int64_t time = stage.compute + stage.communication;
    out.bottleneck = std::max(out.bottleneck, time);
    sum += time;
    out.stages.push_back(std::move(stage));
  }
  std::sort(out.transfers.begin(), out.transfers.end(), [](const ir::StageTransfer& a, const ir::StageTransfer& b) {
    return std::tie(a.from_stage, a.tensor, a.to_stage) < std::tie(b.from_stage, b.tensor, b.to_stage);
  });
  plan.pipeline_time = sum + (so.micro_batches - 1) * out.bottleneck;
  plan.cache = solver.stats();
  return plan;
}

}  // namespace

CutChoice best_cuts_pruned(RangeSolver& solver, const std::vector<int>& bounds, int stages) {
  const int m = static_cast<int>(bounds.size());
  // Upper bound: the cuts that are best under the lower bounds, solved exactly.
  const CutChoice guess = best_cuts(m, stages, [&](int i, int j) { return solver.lower_bound(bounds[i], bounds[j]); });
  int64_t upper = kForbidden;
  if (guess.bottleneck < kForbidden) {
    std::vector<int> b{0};
    b.insert(b.end(), guess.cuts.begin(), guess.cuts.end());
    b.push_back(m - 1);
    upper = 0;
    for (std::size_t s = 0; s + 1 < b.size(); ++s) upper = std::max(upper, solver.time(bounds[b[s]], bounds[b[s + 1]]));
  }
  // A range whose lower bound exceeds that plan's bottleneck is slower than
  // the optimal bottleneck: standing in its lower bound for its time changes
  // neither the least bottleneck nor the ranges within it (see stages.hpp).
  return best_cuts(m, stages, [&](int i, int j) {
    const int64_t bound = solver.lower_bound(bounds[i], bounds[j]);
    return upper < kForbidden && bound > upper ? bound : solver.time(bounds[i], bounds[j]);
  });
}

StageBalance parse_stage_balance(std::string_view text) {
  if (text == "params") return StageBalance::params;
  if (text == "cost") return StageBalance::cost;
  throw ir::InputError("unknown stage balance '" + std::string(text) + "' (known: cost, params)");
}

std::string stage_balance_name(StageBalance balance) { return balance == StageBalance::params ? "params" : "cost"; }

ir::Mesh stage_sub_mesh(const ir::Mesh& mesh) {
  ir::Mesh sub = mesh;
  if (mesh.rank() <= 1) {
    sub.shape = {1};
    sub.bandwidth_gbps.resize(1);
    sub.latency_us.resize(1);
    return sub;
  }
  sub.shape.erase(sub.shape.begin());
  sub.bandwidth_gbps.erase(sub.bandwidth_gbps.begin());
  sub.latency_us.erase(sub.latency_us.begin());
  return sub;
}

StagePlan plan_with_cuts(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                         const SynthOptions& options, const StageOptions& stage_options, const std::vector<int>& cuts) {
  check_inputs(graph, mesh, options, stage_options);
  RangeSolver solver(graph, program_order(graph), mesh, model, options);
  return build_plan(solver, graph, mesh, model, stage_options, cuts);
}

StagePlan plan_stage_layout(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                            const SynthOptions& options, const StageOptions& so) {
  check_inputs(graph, mesh, options, so);
  const auto order = program_order(graph);
  RangeSolver solver(graph, order, mesh, model, options);
  int found = 0;
  const auto fairscale = fairscale_cuts(graph, order, so.stages, &found);
  if (so.balance == StageBalance::params) {
    if (found != so.stages) {
      throw ir::InputError("fairscale's parameter-count rule cuts this model into " + std::to_string(found) +
                           " non-empty stages, not --stages " + std::to_string(so.stages) +
                           "; use --stage-balance cost");
    }
    return build_plan(solver, graph, mesh, model, so, fairscale);
  }
  const CutPoints points = candidate_cuts(graph, order, found == so.stages ? fairscale : std::vector<int>{});
  if (static_cast<int>(points.positions.size()) < so.stages - 1) {
    throw ir::InputError("the model has " + std::to_string(points.positions.size() + 1) +
                         " layers to cut between, fewer than --stages " + std::to_string(so.stages));
  }
  std::vector<int> bounds{0};
  bounds.insert(bounds.end(), points.positions.begin(), points.positions.end());
  bounds.push_back(static_cast<int>(order.size()));
  const CutChoice choice = best_cuts_pruned(solver, bounds, so.stages);
  if (choice.bottleneck >= kForbidden) {
    throw ir::InputError("no placement of " + std::to_string(so.stages) + " stages fits the memory budget");
  }
  std::vector<int> cuts;
  for (int c : choice.cuts) cuts.push_back(bounds[c]);
  StagePlan plan = build_plan(solver, graph, mesh, model, so, cuts);
  plan.candidates = points.positions;
  if (found == so.stages && fairscale != cuts) {
    // Merging segments may have dropped fairscale's cuts from the candidates:
    // its plan is still a placement the cost rule must not lose to.
    try {
      StagePlan params = build_plan(solver, graph, mesh, model, so, fairscale);
      if (std::tie(params.schedule.bottleneck, params.pipeline_time) < std::tie(plan.schedule.bottleneck, plan.pipeline_time)) {
        params.candidates = points.positions;
        params.cache = solver.stats();
        return params;
      }
    } catch (const ir::InputError&) {
      // fairscale's stages overflow the memory budget: nothing to compare
    }
  }
  plan.cache = solver.stats();
  return plan;
}

ir::StagedSchedule plan_stages(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                               const SynthOptions& options, const StageOptions& stage_options) {
  return plan_stage_layout(graph, mesh, model, options, stage_options).schedule;
}

}  // namespace shardsynth::synth
