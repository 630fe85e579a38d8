// Staged schedules: stage graphs cut from a model, and the JSON form.
#include <doctest/doctest.h>

#include "ir/error.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"
#include "ir/staged_schedule.hpp"

namespace shardsynth::ir {
namespace {

std::vector<std::string> names(const Graph& g) {
  std::vector<std::string> out;
  for (Vertex v : g.topological_order()) out.push_back(g.node(v).name + "/" + g.node(v).kind);
  return out;
}

TEST_CASE("stage_graph_CutMlpReceivesAndSends") {
  const Graph mlp = build_mlp({});
  const Graph first = stage_graph(mlp, {"x", "fc1"});
  CHECK(names(first) == std::vector<std::string>{"x/placeholder", "fc1/linear", "fc1:send/output"});
  const Graph second = stage_graph(mlp, {"gelu", "fc2", "output"});
  CHECK(names(second) == std::vector<std::string>{"fc1/placeholder", "gelu/gelu", "fc2/linear", "output/output"});
  CHECK(second.node(*second.find("fc1")).type.shape == mlp.node(*mlp.find("fc1")).type.shape);
  CHECK(second.node(*second.find("fc2")).params.size() == 2);
  CHECK_THROWS_WITH_AS(stage_graph(mlp, {"fc3"}), doctest::Contains("'fc3'"), InputError);
}

TEST_CASE("staged_schedule_from_json_RoundTripsAndNamesBadFields") {
  StagedSchedule s;
  s.mesh = {2, 4};
  s.cost_model = "alpha-beta";
  s.balance = "cost";
  s.micro_batches = 4;
  s.bottleneck = 1234;
  for (int i = 0; i < 2; ++i) {
    Stage st;
    st.index = i;
    st.nodes = {i == 0 ? "x" : "gelu"};
    st.schedule.mesh = {4};
    st.schedule.cost_model = "alpha-beta";
    st.compute = 10 + i;
    s.stages.push_back(st);
  }
  s.transfers.push_back({"fc1", 0, 1, "RRR", 4096, 77});
  const nlohmann::json j = to_json(s);
  CHECK(staged_schedule_from_json(j) == s);

  nlohmann::json missing = j;
  missing.erase("balance");
  CHECK_THROWS_WITH_AS(staged_schedule_from_json(missing), doctest::Contains("'balance'"), InputError);
  nlohmann::json backwards = j;
  backwards["transfers"][0]["to_stage"] = 0;
  CHECK_THROWS_WITH_AS(staged_schedule_from_json(backwards), doctest::Contains("'fc1'"), InputError);
  nlohmann::json too_many = j;
  too_many["mesh"] = {4, 2};
  CHECK_THROWS_WITH_AS(staged_schedule_from_json(too_many), doctest::Contains("axis 0 has 4"), InputError);
}

}  // namespace
}  // namespace shardsynth::ir
