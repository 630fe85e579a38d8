#include "ir/staged_schedule.hpp"

#include <map>
#include <set>

#include "ir/error.hpp"
#include "ir/json_field.hpp"
#include "ir/op_table.hpp"

namespace shardsynth::ir {

namespace {

template <class T>
T field(const nlohmann::json& j, const char* name, const std::string& where) {
  return json_field<T>(j, name, where, "staged schedule");
}

}  // namespace

nlohmann::json to_json(const StagedSchedule& s) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : s.stages) {
    stages.push_back({{"index", st.index},
                      {"nodes", st.nodes},
                      {"schedule", to_json(st.schedule)},
                      {"compute", st.compute},
                      {"communication", st.communication},
                      {"memory", st.memory},
                      {"params", st.params}});
  }
  nlohmann::json transfers = nlohmann::json::array();
  for (const auto& t : s.transfers) {
    transfers.push_back({{"tensor", t.tensor},
                         {"from_stage", t.from_stage},
                         {"to_stage", t.to_stage},
                         {"spec", t.spec},
                         {"bytes", t.bytes},
                         {"cost", t.cost}});
  }
  return {{"format", kStagedScheduleFormat},
          {"mesh", s.mesh},
          {"cost_model", s.cost_model},
          {"balance", s.balance},
          {"micro_batches", s.micro_batches},
          {"bottleneck", s.bottleneck},
          {"stages", stages},
          {"transfers", transfers}};
}

StagedSchedule staged_schedule_from_json(const nlohmann::json& j) {
  StagedSchedule s;
  const std::string top = "the top level";
  const auto format = field<std::string>(j, "format", top);
  if (format != kStagedScheduleFormat) throw InputError("staged schedule: unsupported format '" + format + "'");
  s.mesh = field<std::vector<int64_t>>(j, "mesh", top);
  s.cost_model = field<std::string>(j, "cost_model", top);
  s.balance = field<std::string>(j, "balance", top);
  s.micro_batches = field<int>(j, "micro_batches", top);
  s.bottleneck = field<int64_t>(j, "bottleneck", top);
  if (s.mesh.empty()) throw InputError("staged schedule: the mesh has no axes");
  if (s.micro_batches < 1) throw InputError("staged schedule: micro_batches " + std::to_string(s.micro_batches));
  const auto stages = field<std::vector<nlohmann::json>>(j, "stages", top);
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::string where = "stage " + std::to_string(i);
    Stage st;
    st.index = field<int>(stages[i], "index", where);
    if (st.index != static_cast<int>(i)) throw InputError("staged schedule: " + where + " has index " + std::to_string(st.index));
    st.nodes = field<std::vector<std::string>>(stages[i], "nodes", where);
    st.schedule = schedule_from_json(field<nlohmann::json>(stages[i], "schedule", where));
    st.compute = field<int64_t>(stages[i], "compute", where);
    st.communication = field<int64_t>(stages[i], "communication", where);
    st.memory = field<int64_t>(stages[i], "memory", where);
    st.params = field<int64_t>(stages[i], "params", where);
    s.stages.push_back(std::move(st));
  }
  if (static_cast<int64_t>(s.stages.size()) != s.mesh[0]) {
    throw InputError("staged schedule: " + std::to_string(s.stages.size()) + " stages on a mesh whose axis 0 has " +
                     std::to_string(s.mesh[0]) + " groups");
  }
  for (const auto& tj : field<std::vector<nlohmann::json>>(j, "transfers", top)) {
    StageTransfer t;
    t.tensor = field<std::string>(tj, "tensor", "a transfer");
    const std::string where = "transfer of '" + t.tensor + "'";
    t.from_stage = field<int>(tj, "from_stage", where);
    t.to_stage = field<int>(tj, "to_stage", where);
    t.spec = field<std::string>(tj, "spec", where);
    t.bytes = field<int64_t>(tj, "bytes", where);
    t.cost = field<int64_t>(tj, "cost", where);
    if (t.from_stage < 0 || t.to_stage <= t.from_stage || t.to_stage >= static_cast<int>(s.stages.size())) {
      throw InputError("staged schedule: " + where + " goes from stage " + std::to_string(t.from_stage) + " to stage " +
                       std::to_string(t.to_stage));
    }
    s.transfers.push_back(std::move(t));
  }
  return s;
}

Graph stage_graph(const Graph& graph, const std::vector<std::string>& nodes) {
  std::set<Vertex> inside;
  for (const auto& name : nodes) {
    const auto v = graph.find(name);
    if (!v) throw InputError("stage: no node '" + name + "' in the graph");
    inside.insert(*v);
  }
  Graph out;
  std::set<Vertex> received;
  for (Vertex v : graph.topological_order()) {
    if (!inside.count(v)) continue;
    std::vector<std::string> inputs;
    for (Vertex u : graph.inputs_of(v)) {
      if (!inside.count(u) && received.insert(u).second) {
        const bool activation = graph.node(u).kind != kPlaceholder;
        Node placeholder{graph.node(u).name, std::string(kPlaceholder), activation ? kReceivedTarget : "",
                         graph.node(u).type, {}, {}, {}};
        out.add_node(std::move(placeholder));
      }
      inputs.push_back(graph.node(u).name);
    }
    out.add_node(graph.node(v), inputs);
    bool sends = false;
    for (const auto& [user, index] : graph.users_of(v)) sends = sends || !inside.count(user);
    if (sends) {
      Node send{graph.node(v).name + kSendSuffix, std::string(kOutput), {}, graph.node(v).type, {}, {}, {}};
      out.add_node(std::move(send), {graph.node(v).name});
    }
  }
  return out;
}

}  // namespace shardsynth::ir
