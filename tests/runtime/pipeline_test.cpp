// The stage layout on the mesh and the GPipe forward schedule: exact step
// order, and a rendezvous simulation (a send completes only together with
// its receive, as a blocking MPI_Send may) showing every stage finishes and
// micro-batches overlap in the pipeline's diagonal.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "runtime/pipeline.hpp"
#include "runtime/stage_communicator.hpp"

namespace shardsynth::runtime {
namespace {

// One program (list of steps) per stage; a step of stage s is written
// "r<m>:<transfer>", "c<m>" or "s<m>:<transfer>".
std::string text(const PipelineStep& step) {
  const char kind = step.kind == StepKind::receive ? 'r' : step.kind == StepKind::compute ? 'c' : 's';
  return std::string(1, kind) + std::to_string(step.micro_batch) +
         (step.transfer >= 0 ? ":" + std::to_string(step.transfer) : "");
}

struct Simulation {
  bool finished = false;                         // every stage ran its whole program
  std::map<std::pair<int, int>, int> computed;   // (stage, micro-batch) -> round it computed in
};

// Rounds: first every send whose receiver waits on the same transfer and
// micro-batch completes with it (repeated while any does); then every stage
// whose next step is a compute does it. Stops when a round changes nothing.
Simulation simulate(const std::vector<std::vector<PipelineStep>>& programs) {
  std::vector<std::size_t> at(programs.size(), 0);
  Simulation sim;
  for (int round = 0;; ++round) {
    bool progress = false;
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t s = 0; s < programs.size(); ++s) {
        if (at[s] == programs[s].size() || programs[s][at[s]].kind != StepKind::send) continue;
        const PipelineStep& send = programs[s][at[s]];
        for (std::size_t t = 0; t < programs.size(); ++t) {
          if (at[t] == programs[t].size()) continue;
          const PipelineStep& receive = programs[t][at[t]];
          if (receive.kind == StepKind::receive && receive.transfer == send.transfer && receive.micro_batch == send.micro_batch) {
            ++at[s];
            ++at[t];
            moved = progress = true;
            break;
          }
        }
      }
    }
    for (std::size_t s = 0; s < programs.size(); ++s) {
      if (at[s] < programs[s].size() && programs[s][at[s]].kind == StepKind::compute) {
        sim.computed[{static_cast<int>(s), programs[s][at[s]].micro_batch}] = round;
        ++at[s];
        progress = true;
      }
    }
    if (!progress) break;
  }
  sim.finished = true;
  for (std::size_t s = 0; s < programs.size(); ++s) sim.finished = sim.finished && at[s] == programs[s].size();
  return sim;
}

std::vector<std::vector<PipelineStep>> programs(const std::vector<ir::StageTransfer>& transfers, int stages, int micro_batches) {
  std::vector<std::vector<PipelineStep>> out;
  for (int s = 0; s < stages; ++s) out.push_back(stage_steps(transfers, s, micro_batches));
  return out;
}

TEST_CASE("stage_steps_ReceivesThenComputesThenSendsPerMicroBatch") {
  // Stage 1 reads a and b from stage 0 and sends c to stages 3 and 2.
  const std::vector<ir::StageTransfer> transfers = {
      {"b", 0, 1, "RR", 0, 0}, {"c", 1, 3, "RR", 0, 0}, {"a", 0, 1, "RR", 0, 0}, {"c", 1, 2, "RR", 0, 0}};
  std::vector<std::string> got;
  for (const auto& step : stage_steps(transfers, 1, 2)) got.push_back(text(step));
  CHECK(got == std::vector<std::string>{"r0:2", "r0:0", "c0", "s0:3", "s0:1", "r1:2", "r1:0", "c1", "s1:3", "s1:1"});
  // A stage with no transfers only computes.
  std::vector<std::string> alone;
  for (const auto& step : stage_steps({}, 0, 3)) alone.push_back(text(step));
  CHECK(alone == std::vector<std::string>{"c0", "c1", "c2"});
}

TEST_CASE("stage_steps_ChainFillsThePipelineDiagonally") {
  const std::vector<ir::StageTransfer> chain = {{"x", 0, 1, "R", 0, 0}, {"y", 1, 2, "R", 0, 0}, {"z", 2, 3, "R", 0, 0}};
  const Simulation sim = simulate(programs(chain, 4, 4));
  REQUIRE(sim.finished);
  for (int s = 0; s < 4; ++s) {
    for (int m = 0; m < 4; ++m) CHECK(sim.computed.at({s, m}) == s + m);
  }
}

TEST_CASE("stage_steps_SkipConnectionsNeverDeadlock") {
  // GPT-2's residual: stage 0 feeds stages 1 and 2 directly; stage 1 feeds 2.
  const std::vector<ir::StageTransfer> skip = {
      {"h.0.residual_1", 0, 2, "RRR", 0, 0}, {"h.0.residual_1", 0, 1, "RRR", 0, 0}, {"h.0.mlp.c_fc", 1, 2, "RRR", 0, 0}};
  CHECK(simulate(programs(skip, 3, 4)).finished);
  // Random forward transfer sets (fixed seed) on up to 6 stages.
  std::mt19937 random(12345);
  for (int trial = 0; trial < 200; ++trial) {
    const int stages = 2 + static_cast<int>(random() % 5);
    std::vector<ir::StageTransfer> transfers;
    const int count = 1 + static_cast<int>(random() % 8);
    for (int i = 0; i < count; ++i) {
      const int from = static_cast<int>(random() % (stages - 1));
      const int to = from + 1 + static_cast<int>(random() % (stages - 1 - from));
      transfers.push_back({"t" + std::to_string(i), from, to, "R", 0, 0});
    }
    CAPTURE(trial);
    const Simulation sim = simulate(programs(transfers, stages, 3));
    CHECK(sim.finished);
  }
}

TEST_CASE("simulate_DetectsACrossedOrder") {
  // The simulation can fail: stage 0 sends to stage 2 first while stage 2
  // first waits for stage 1, which waits for stage 0.
  const std::vector<std::vector<PipelineStep>> crossed = {
      {{StepKind::compute, 0, -1}, {StepKind::send, 0, 0}, {StepKind::send, 0, 1}},
      {{StepKind::receive, 0, 1}, {StepKind::compute, 0, -1}, {StepKind::send, 0, 2}},
      {{StepKind::receive, 0, 2}, {StepKind::receive, 0, 0}, {StepKind::compute, 0, -1}}};
  CHECK_FALSE(simulate(crossed).finished);
}

TEST_CASE("stage_layout_GroupsAreContiguousRanksOnAxisZero") {
  const StageLayout layout = stage_layout({4, 2});
  CHECK(layout.stages == 4);
  CHECK(layout.group_size == 2);
  CHECK(stage_of_rank(layout, 0) == 0);
  CHECK(stage_of_rank(layout, 5) == 2);
  CHECK(peer_rank(layout, 5, 0) == 1);
  CHECK(peer_rank(layout, 4, 3) == 6);
  CHECK_THROWS_AS(peer_rank(layout, 4, 4), std::invalid_argument);
  const StageLayout line = stage_layout({4});
  CHECK(line.group_size == 1);
  CHECK(stage_of_rank(line, 3) == 3);
  CHECK(peer_rank(line, 3, 1) == 1);
  CHECK(stage_sub_mesh({4, 2}) == std::vector<int64_t>{2});
  CHECK(stage_sub_mesh({4}) == std::vector<int64_t>{1});
}

}  // namespace
}  // namespace shardsynth::runtime
