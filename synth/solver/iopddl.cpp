#include "synth/solver/iopddl.hpp"

#include "common/error.hpp"
#include "synth/solver/iopddl_raw.hpp"
#include "synth/solver/iopddl_stream.hpp"

namespace shardsynth::synth {
namespace {

using nlohmann::json;

int64_t integer(const json& value, const std::string& where) {
  int64_t out = 0;
  const std::string reason = integer_fault(value, out);
  if (!reason.empty()) throw common::InputError(where + ": " + reason);
  return out;
}

}  // namespace

Problem problem_from_iopddl(const json& root, const std::string& where) { return problem_from_raw(raw_from_json(root), where); }

Problem load_iopddl(const std::string& path) { return problem_from_raw(read_iopddl_stream(path), path); }

json problem_to_iopddl(const Problem& problem) {
  json intervals = json::array(), costs = json::array(), usages = json::array();
  for (const auto& node : problem.nodes) {
    intervals.push_back({node.live_from, node.live_to});
    costs.push_back(node.costs);
    usages.push_back(node.usages.empty() ? std::vector<int64_t>(node.costs.size(), 0) : node.usages);
  }
  json ends = json::array(), tables = json::array();
  for (const auto& edge : problem.edges) {
    ends.push_back({edge.from, edge.to});
    tables.push_back(edge.costs);
  }
  json p;
  p["name"] = problem.name;
  p["nodes"] = {{"intervals", intervals}, {"costs", costs}, {"usages", usages}};
  p["edges"] = {{"nodes", ends}, {"costs", tables}};
  if (problem.usage_limit) p["usage_limit"] = *problem.usage_limit;
  return {{"problem", p}};
}

json solution_to_iopddl(const Assignment& assignment) { return assignment; }

Assignment solution_from_iopddl(const json& value, const Problem& problem, const std::string& where) {
  if (!value.is_array()) throw common::InputError(where + ": a solution is an array of strategy indices");
  if (value.size() != problem.nodes.size()) {
    throw common::InputError(where + ": the solution has " + std::to_string(value.size()) + " entries for " +
                         std::to_string(problem.nodes.size()) + " nodes");
  }
  Assignment a;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const int64_t s = integer(value[i], where + ": solution[" + std::to_string(i) + "]");
    if (s < 0 || s >= problem.nodes[i].size()) {
      throw common::InputError(where + ": solution[" + std::to_string(i) + "] = " + std::to_string(s) + " but node " +
                           std::to_string(i) + " has " + std::to_string(problem.nodes[i].size()) + " strategies");
    }
    a.push_back(static_cast<int>(s));
  }
  return a;
}

}  // namespace shardsynth::synth
