// Reproduces the Slapo PR's printed trace on its MLP (x [8, 1024, 1024],
// ffn 4096, p = 8): each of the five assignments it prints, scored by the
// evaluator and printed by the table printer, and the loop's end state.
#include <doctest/doctest.h>

#include "costs/cost_model.hpp"
#include "golden.hpp"
#include "ir/models.hpp"
#include "ir/schedule.hpp"
#include "ir/text_table.hpp"
#include "synth/followers.hpp"
#include "synth/report/iteration_table.hpp"
#include "synth/synthesizer.hpp"

using namespace shardsynth;

namespace {

const synth::Lowered& seed_lowered() {
  static const auto model = costs::make_cost_model("slapo");
  static const synth::Lowered lowered = synth::lower(ir::build_mlp({}), ir::parse_mesh("8"), *model);
  return lowered;
}

// The assignment whose fc1 and fc2 rows show these InSpecs.
synth::Assignment assignment_of(const synth::Lowered& lowered, const std::string& fc1, const std::string& fc2) {
  synth::Assignment a(lowered.problem.nodes.size(), 0);
  int found = 0;
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    const std::string& label = lowered.problem.nodes[n].label;
    if (label != "fc1" && label != "fc2") continue;
    for (int s = 0; s < lowered.problem.nodes[n].size(); ++s) {
      if (synth::in_spec_text(lowered, static_cast<int>(n), s) == (label == "fc1" ? fc1 : fc2)) {
        a[n] = s;
        ++found;
      }
    }
  }
  REQUIRE(found == 2);
  synth::follow_leaders(lowered, a);  // the params followers take their ops' choices
  return a;
}

struct SeedStep {
  const char* fc1;   // fc1's InSpec
  const char* fc2;   // fc2's InSpec
  int64_t total;     // the PR's Total
};

constexpr SeedStep kSeed[] = {
    {"SRxRR", "RSxSR", 1507328}, {"RRxRS", "RSxSR", 1048576}, {"RRxRS", "RRxRS", 655360},
    {"RRxRS", "SRxRR", 589824},  {"SRxRR", "SRxRR", 131072},
};

}  // namespace

TEST_CASE("evaluate_SeedAssignmentsCostWhatThePrPrints") {
  const auto& lowered = seed_lowered();
  for (const auto& step : kSeed) {
    CAPTURE(step.fc1);
    CAPTURE(step.fc2);
    CHECK(synth::evaluate(lowered.problem, assignment_of(lowered, step.fc1, step.fc2)) == step.total);
  }
}

TEST_CASE("format_iteration_table_SeedTablesGolden") {
  const auto& lowered = seed_lowered();
  for (int i = 0; i < 5; ++i) {
    CAPTURE(i);
    const auto a = assignment_of(lowered, kSeed[i].fc1, kSeed[i].fc2);
    CHECK(ir::as_logged(synth::format_iteration_table(lowered, a)) + "\n" ==
          testing::golden("seed_iter" + std::to_string(i) + ".txt"));
  }
}

TEST_CASE("synthesize_SeedMlpEndsAtTheOptimumWithThePrsDirectives") {
  const auto model = costs::make_cost_model("slapo");
  std::vector<int64_t> totals;
  int unsat = 0;
  const auto result = synth::synthesize(ir::build_mlp({}), ir::parse_mesh("8"), *model, {},
                                        [&](const synth::Lowered& lowered, const synth::Iteration& it) {
                                          if (it.status == synth::CheckStatus::sat) {
                                            CHECK(synth::evaluate(lowered.problem, it.assignment) == it.cost);
                                            totals.push_back(it.cost);
                                          } else {
                                            CHECK(it.status == synth::CheckStatus::unsat);
                                            ++unsat;
                                          }
                                        });
  REQUIRE(!totals.empty());
  for (std::size_t i = 1; i < totals.size(); ++i) CHECK(totals[i] < totals[i - 1]);
  CHECK(totals.back() == 131072);
  CHECK(unsat == 1);
  CHECK(result.search.proven_optimal);
  CHECK(result.schedule.cost == 131072);
  CHECK(ir::directives_text(result.schedule) ==
        "sch[\"fc1\"].sync(mode=\"fwd_pre\", sync_op_or_fn=\"RR->SR\")\n"
        "sch[\"fc2\"].sync(mode=\"fwd_post\", sync_op_or_fn=\"SR->RR\")\n");
}
