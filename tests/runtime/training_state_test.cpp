// A training step's parameter gathers (runtime/training_state.hpp): a use
// that reads its parameter in another spec than it is stored in gets its copy
// just before its op's forward and again around its backward (and a
// checkpointed op's recomputation), freed after each. The memory ledger sees
// the copy as the planned transient "node.param:gathered" when the plan
// lists it (a recomputation's copy never), held only inside its planned
// spans, else as unplanned transient bytes at those steps alone. One device (SoloCommunicator): the gather is a
// spec change without traffic, which is all the ledger looks at.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"
#include "ir/recompute_segments.hpp"
#include "ir/schedule.hpp"
#include "runtime/forward_pass.hpp"
#include "runtime/loss.hpp"
#include "runtime/solo_communicator.hpp"
#include "runtime/training_state.hpp"
#include "tiny_gpt2.hpp"

using namespace shardsynth;

namespace {

ir::Graph small_mlp() {
  ir::MlpConfig c;
  c.batch = 2;
  c.seq = 4;
  c.hidden = 8;
  c.ffn = 16;
  return ir::build_mlp(c);
}

int64_t position(const ir::Graph& graph, const std::string& name) {
  const auto order = graph.topological_order();
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (graph.node(order[i]).name == name) return static_cast<int64_t>(i);
  }
  FAIL("no node " << name);
  return -1;
}

// Time steps (synth/liveness.hpp): the forward and the backward of the node at `pos`.
int64_t backward_step(const ir::Graph& graph, int64_t pos) { return 2 * static_cast<int64_t>(graph.size()) - 1 - pos; }

// One tracked training step of `graph` under `plan` on one device: its measurement.
runtime::MemoryMeasured one_step(const ir::Graph& graph, const runtime::PlanSpecs& plan,
                                 std::vector<ir::PlannedTensor> planned) {
  const ir::Mesh mesh = ir::parse_mesh("1");
  runtime::SoloCommunicator comm;
  runtime::TrainSetup setup;
  runtime::TrainingState state(graph, mesh, plan, comm, setup);
  state.track_memory(std::move(planned));
  state.begin_step();
  const auto pass = state.forward(&setup.inputs, nullptr);
  const runtime::LossChoice loss = runtime::choose_loss(graph);
  std::map<std::string, runtime::Tensor> grads;
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    if (node.kind != ir::kOutput) continue;
    const runtime::Tensor* labels = loss.kind == runtime::LossKind::next_token ? &pass->whole_input(loss.labels) : nullptr;
    state.take_loss(*pass, node.name, loss, labels, 1, 1.0, grads);
  }
  state.backward(*pass, std::move(grads));
  state.end_step();
  REQUIRE(state.memory());
  return *state.memory();
}

// The unplanned gathered bytes the ledger saw at each step.
std::vector<int64_t> unplanned_gathers(const runtime::MemoryMeasured& m) {
  std::vector<int64_t> out;
  for (const auto& kinds : m.transient_steps) {
    const auto it = kinds.find("gathered parameters");
    out.push_back(it == kinds.end() ? 0 : it->second);
  }
  return out;
}

// `bytes` at `steps`, 0 at the other of `n` steps.
std::vector<int64_t> at_steps(std::size_t n, const std::vector<int64_t>& steps, int64_t bytes) {
  std::vector<int64_t> out(n, 0);
  for (int64_t s : steps) out.at(static_cast<std::size_t>(s)) = bytes;
  return out;
}

// The MLP with fc1's weight stored sharded (ZeRO-3 style: "S" on a one-device mesh) and used replicated.
runtime::PlanSpecs fsdp_fc1(const ir::Graph& graph) {
  runtime::PlanSpecs plan = runtime::replicated_plan(graph);
  plan.specs[std::string("fc1.weight") + ir::kStoredSuffix] = ir::parse_spec("SR", 1);
  return plan;
}

constexpr int64_t kFc1WeightBytes = 16 * 8 * 4;  // [ffn, hidden] fp32

}  // namespace

TEST_CASE("TrainingState_GathersAnUnplannedCopyOnlyAtItsOpsForwardAndBackward") {
  const ir::Graph graph = small_mlp();
  const runtime::MemoryMeasured m = one_step(graph, fsdp_fc1(graph), {});
  const int64_t f = position(graph, "fc1");
  const std::size_t steps = 2 * graph.size() + 1;
  REQUIRE(m.transient_steps.size() == steps);
  // fc2's weight, stored as used, is read in place: no copy at its steps.
  CHECK(unplanned_gathers(m) == at_steps(steps, {f, backward_step(graph, f)}, kFc1WeightBytes));
  for (const auto& held : m.steps) CHECK(held.transient == 0);  // nothing planned
}

TEST_CASE("TrainingState_HoldsThePlannedGatheredCopyInsideItsSpans") {
  const ir::Graph graph = small_mlp();
  const int64_t f = position(graph, "fc1"), b = backward_step(graph, f);
  const std::string name = std::string("fc1.weight") + ir::kGatheredSuffix;
  const std::vector<ir::PlannedTensor> planned = {
      {name, ir::MemoryCategory::transient, kFc1WeightBytes, {{f, f + 1}, {b, b + 1}}}};
  const runtime::MemoryMeasured m = one_step(graph, fsdp_fc1(graph), planned);
  const std::size_t steps = 2 * graph.size() + 1;
  REQUIRE(m.steps.size() == steps);
  std::vector<int64_t> transient;
  for (const auto& held : m.steps) transient.push_back(held.transient);
  CHECK(transient == at_steps(steps, {f, b}, kFc1WeightBytes));
  CHECK(unplanned_gathers(m) == std::vector<int64_t>(steps, 0));  // the copy is the plan's, not unplanned

  // A plan without the backward's span: the re-gather there is held outside it.
  const std::vector<ir::PlannedTensor> forward_only = {{name, ir::MemoryCategory::transient, kFc1WeightBytes, {{f, f + 1}}}};
  CHECK_THROWS_WITH_AS(one_step(graph, fsdp_fc1(graph), forward_only),
                       ("memory plan: tensor 'fc1.weight:gathered' is held at time step " + std::to_string(b) +
                        " (backward of fc1), outside its planned interval")
                           .c_str(),
                       std::runtime_error);
  // Without the forward's span: the forward's gather is.
  const std::vector<ir::PlannedTensor> backward_only = {{name, ir::MemoryCategory::transient, kFc1WeightBytes, {{b, b + 1}}}};
  CHECK_THROWS_WITH_AS(one_step(graph, fsdp_fc1(graph), backward_only),
                       ("memory plan: tensor 'fc1.weight:gathered' is held at time step " + std::to_string(f) +
                        " (forward of fc1), outside its planned interval")
                           .c_str(),
                       std::runtime_error);
}

TEST_CASE("TrainingState_GathersAgainForACheckpointedOpsRecomputation") {
  // GPT-2's first MLP projection, checkpointed and stored apart from its use:
  // gathered for its forward, its recomputation before the backward of its
  // segment's last node, and its backward.
  const ir::Graph graph = testing::tiny_gpt2(1);
  const auto order = graph.topological_order();
  const ir::RecomputeSegments segments = ir::recompute_segments(graph, order);
  const auto v = graph.find("h.0.mlp.c_fc");
  REQUIRE(v);
  REQUIRE(ir::may_recompute(graph, segments, *v));
  runtime::PlanSpecs plan = runtime::replicated_plan(graph);
  plan.recompute.insert("h.0.mlp.c_fc");
  plan.specs[std::string("h.0.mlp.c_fc.weight") + ir::kStoredSuffix] = ir::parse_spec("SR", 1);
  const int64_t f = position(graph, "h.0.mlp.c_fc");
  const int64_t r = backward_step(graph, segments.segment_end[segments.segment[*v]]);
  REQUIRE(r < backward_step(graph, f));
  const runtime::MemoryMeasured m = one_step(graph, plan, {});
  const std::size_t steps = 2 * graph.size() + 1;
  // c_fc [64, 256]; and lm_head, tied to wte [256, 64], reads a copy around its forward and backward.
  std::vector<int64_t> want = at_steps(steps, {f, r, backward_step(graph, f)}, 64 * 256 * 4);
  const int64_t head = position(graph, "lm_head");
  const std::vector<int64_t> tied = at_steps(steps, {head, backward_step(graph, head)}, 256 * 64 * 4);
  for (std::size_t s = 0; s < steps; ++s) want[s] += tied[s];
  CHECK(unplanned_gathers(m) == want);

  // Planned (synth plans the forward's and the backward's copies): those are
  // held as planned, the recomputation's stays unplanned scratch.
  const int64_t b = backward_step(graph, f);
  const std::vector<ir::PlannedTensor> planned = {{std::string("h.0.mlp.c_fc.weight") + ir::kGatheredSuffix,
                                                   ir::MemoryCategory::transient, 64 * 256 * 4, {{f, f + 1}, {b, b + 1}}}};
  const runtime::MemoryMeasured held = one_step(graph, plan, planned);
  std::vector<int64_t> transient;
  for (const auto& step : held.steps) transient.push_back(step.transient);
  CHECK(transient == at_steps(steps, {f, b}, 64 * 256 * 4));
  std::vector<int64_t> scratch = at_steps(steps, {r}, 64 * 256 * 4);
  for (std::size_t s = 0; s < steps; ++s) scratch[s] += tied[s];
  CHECK(unplanned_gathers(held) == scratch);
}
