#include <doctest/doctest.h>

#include "costs/cost_model.hpp"
#include "ir/models.hpp"
#include "ir/schedule.hpp"
#include "synth/followers.hpp"
#include "synth/report/iteration_table.hpp"
#include "synth/schedule_builder.hpp"

using namespace shardsynth;

namespace {

synth::Lowered mlp(int64_t p) {
  const auto model = costs::make_cost_model("slapo");
  return synth::lower(ir::build_mlp({}), ir::parse_mesh(std::to_string(p)), *model);
}

int strategy(const synth::Lowered& lowered, const std::string& node, const std::string& in_spec) {
  for (std::size_t n = 0; n < lowered.nodes.size(); ++n) {
    if (lowered.problem.nodes[n].label != node) continue;
    for (int s = 0; s < lowered.problem.nodes[n].size(); ++s) {
      if (synth::in_spec_text(lowered, static_cast<int>(n), s) == in_spec) return s;
    }
  }
  FAIL("no strategy " << in_spec << " at " << node);
  return -1;
}

synth::Assignment assign(const synth::Lowered& lowered, const std::string& fc1, const std::string& fc2) {
  synth::Assignment a(lowered.problem.nodes.size(), 0);
  for (std::size_t n = 0; n < a.size(); ++n) {
    const auto& label = lowered.problem.nodes[n].label;
    if (label == "fc1") a[n] = strategy(lowered, "fc1", fc1);
    if (label == "fc2") a[n] = strategy(lowered, "fc2", fc2);
  }
  synth::follow_leaders(lowered, a);  // the params followers take their ops' choices
  return a;
}

}  // namespace

TEST_CASE("lower_MlpFollowsGeluAndHasOneNodePerDecision") {
  const auto lowered = mlp(8);
  std::vector<std::string> labels;
  for (const auto& n : lowered.problem.nodes) labels.push_back(n.label);
  // Each op's parameters sit on a follower of its own (synth/followers.hpp), live the whole step.
  CHECK(labels == std::vector<std::string>{"x", "fc1", "fc2", "output", "fc1:params", "fc2:params"});
  CHECK(lowered.problem.edges.size() == 5);  // x->fc1, fc1(gelu)->fc2, fc2->output, then fc1 and fc2 to their followers
  CHECK(lowered.owner[*lowered.graph.find("gelu")] == lowered.owner[*lowered.graph.find("fc1")]);
}

TEST_CASE("format_iteration_table_RowParallelAtTwoDevices") {
  const auto lowered = mlp(2);
  const auto a = assign(lowered, "RRxRS", "RSxSR");  // Megatron: column- then row-parallel
  CHECK(synth::format_iteration_table(lowered, a) ==
        "Name    InSpec    OutSpec    Cost\n"
        "------  --------  ---------  -------\n"
        "fc1     RRxRS     RS         0\n"
        "|-x     RR        RR         0\n"
        "fc2     RSxSR     RR         1048576\n"
        "|-gelu  RS        RS         0\n"
        "output  RR        RR         0\n"
        "Total                        1048576");
}

TEST_CASE("build_schedule_MegatronDirectives") {
  const auto lowered = mlp(2);
  const auto a = assign(lowered, "RRxRS", "RSxSR");
  const auto schedule = synth::build_schedule(lowered, a, "slapo", synth::evaluate(lowered.problem, a), false);
  CHECK(ir::directives_text(schedule) ==
        "sch[\"fc1\"].shard(\"weight\", dim=0)\n"
        "sch[\"fc1\"].shard(\"bias\", dim=0)\n"
        "sch[\"fc2\"].shard(\"weight\", dim=1)\n"
        "sch[\"fc2\"].sync(mode=\"fwd_post\", sync_op_or_fn=\"RR+P->RR\")\n");
  CHECK(schedule.specs.front() == ir::TensorSpec{"x", "RR"});
}

TEST_CASE("model_text_NamesEveryNode") {
  const auto lowered = mlp(8);
  const auto a = assign(lowered, "SRxRR", "SRxRR");
  const std::string text = synth::model_text(lowered, a);
  CHECK(text.front() == '[');
  CHECK(text.find("fc1 = ") != std::string::npos);
  CHECK(text.find("output = 0") != std::string::npos);
  CHECK(text.find(":params") == std::string::npos);  // followers decide nothing
  CHECK(synth::iteration_header(3) == "=================== Iter 3 ===================");
}
