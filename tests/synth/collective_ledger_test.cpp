// The collectives a plan prices (synth/collective_ledger.hpp): the complete
// itemization of the plan's communication cost.
#include <doctest/doctest.h>

#include <string>

#include "costs/cost_model.hpp"
#include "ir/gpt2.hpp"
#include "synth/collective_ledger.hpp"
#include "synth/random_plan.hpp"
#include "synth/lowering.hpp"

using namespace shardsynth;

namespace {

const costs::CostModel& alpha_beta() {
  static const auto model = costs::make_cost_model("alpha-beta");
  return *model;
}

synth::Lowered lowered(const ir::Graph& graph, const std::string& mesh, costs::Mode mode) {
  synth::LowerOptions options;
  options.mode = mode;
  return synth::lower(graph, ir::parse_mesh(mesh), alpha_beta(), options);
}

// The plan's cost less every op's compute: what its collectives cost.
int64_t communication_cost(const synth::Lowered& l, const synth::Assignment& a) {
  int64_t cost = synth::evaluate(l.problem, a);
  for (std::size_t n = 0; n < l.nodes.size(); ++n) {
    if (l.nodes[n].role == synth::NodeRole::op) cost -= l.nodes[n].strategies[a[n]].cost.compute;
  }
  return cost;
}

int64_t ledger_cost(const std::vector<synth::PricedCollective>& rows) {
  int64_t cost = 0;
  for (const auto& row : rows) cost += row.cost;
  return cost;
}

}  // namespace

TEST_CASE("plan_collectives_PricesSumToTheCommunicationCost") {
  const ir::Graph gpt2 = ir::build_gpt2({.n_layer = 1, .n_head = 4, .n_embd = 64, .seq = 16, .batch = 8, .vocab = 256});
  for (const char* mesh : {"8", "2x4"}) {
    for (const auto mode : {costs::Mode::inference, costs::Mode::training}) {
      const auto l = lowered(gpt2, mesh, mode);
      for (uint64_t seed = 0; seed < 4; ++seed) {
        const synth::Assignment a = synth::random_assignment(l, seed);
        const auto rows = synth::plan_collectives(l, a, alpha_beta());
        CAPTURE(mesh);
        CAPTURE(seed);
        CHECK(ledger_cost(rows) == communication_cost(l, a));
        for (const auto& row : rows) {
          CHECK(row.bytes > 0);
          CHECK((mode == costs::Mode::training || row.phase == costs::Phase::forward));
        }
      }
    }
  }
}
