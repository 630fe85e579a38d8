#include "synth/solver/iopddl.hpp"

#include <cmath>

#include "common/error.hpp"
#include "common/file_io.hpp"
#include "common/json_field.hpp"

namespace shardsynth::synth {
namespace {

using nlohmann::json;

const json& field(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key)) throw common::InputError(where + ": missing '" + key + "'");
  return object.at(key);
}

const json& array(const json& value, const std::string& where) {
  if (!value.is_array()) throw common::InputError(where + ": expected an array");
  return value;
}

int64_t integer(const json& value, const std::string& where) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(kForbidden)) throw common::InputError(where + ": " + value.dump() + " is above 10^18");
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    // Range first: casting a double beyond int64 is undefined (found by fuzzing: 1.1e116).
    if (d >= 0 && d <= 1e18 && d == std::floor(d)) return static_cast<int64_t>(d);
  }
  throw common::InputError(where + ": expected an integer, got " + value.dump());
}

std::vector<int64_t> integers(const json& value, const std::string& where) {
  std::vector<int64_t> out;
  for (std::size_t i = 0; i < array(value, where).size(); ++i) out.push_back(integer(value[i], where + "[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace

Problem problem_from_iopddl(const json& root, const std::string& where) {
  const json& p = field(root, "problem", where);
  Problem problem;
  problem.name = p.contains("name") && p.at("name").is_string() ? p.at("name").get<std::string>() : "iopddl";
  const json& nodes = field(p, "nodes", where + ": problem");
  const json& intervals = array(field(nodes, "intervals", where + ": nodes"), where + ": nodes.intervals");
  const json& costs = array(field(nodes, "costs", where + ": nodes"), where + ": nodes.costs");
  const json& usages = array(field(nodes, "usages", where + ": nodes"), where + ": nodes.usages");
  if (intervals.size() != costs.size() || usages.size() != costs.size()) {
    throw common::InputError(where + ": nodes.intervals, nodes.costs and nodes.usages have " + std::to_string(intervals.size()) +
                         ", " + std::to_string(costs.size()) + " and " + std::to_string(usages.size()) + " entries");
  }
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    ProblemNode node;
    node.label = "n" + std::to_string(i);
    node.costs = integers(costs[i], where + ": nodes.costs" + at);
    node.usages = integers(usages[i], where + ": nodes.usages" + at);
    const auto interval = integers(intervals[i], where + ": nodes.intervals" + at);
    if (interval.size() != 2) throw common::InputError(where + ": nodes.intervals" + at + " is not [start, end]");
    node.live_from = interval[0];
    node.live_to = interval[1];
    if (node.live_from < 0 || node.live_to < node.live_from) {
      throw common::InputError(where + ": nodes.intervals" + at + " is [" + std::to_string(node.live_from) + ", " +
                           std::to_string(node.live_to) + "], not an interval of time steps");
    }
    if (node.costs.empty()) throw common::InputError(where + ": nodes.costs" + at + " has no strategies");
    if (node.usages.size() != node.costs.size()) {
      throw common::InputError(where + ": nodes.usages" + at + " has " + std::to_string(node.usages.size()) + " entries for " +
                           std::to_string(node.costs.size()) + " strategies");
    }
    for (int64_t c : node.costs) {
      if (c < 0) throw common::InputError(where + ": nodes.costs" + at + " holds the negative cost " + std::to_string(c));
    }
    for (int64_t u : node.usages) {
      if (u < 0) throw common::InputError(where + ": nodes.usages" + at + " holds the negative usage " + std::to_string(u));
    }
    problem.nodes.push_back(std::move(node));
  }
  const json& edges = field(p, "edges", where + ": problem");
  const json& ends = array(field(edges, "nodes", where + ": edges"), where + ": edges.nodes");
  const json& tables = array(field(edges, "costs", where + ": edges"), where + ": edges.costs");
  if (ends.size() != tables.size()) {
    throw common::InputError(where + ": edges.nodes and edges.costs have " + std::to_string(ends.size()) + " and " +
                         std::to_string(tables.size()) + " entries");
  }
  const auto n = static_cast<int64_t>(problem.nodes.size());
  for (std::size_t e = 0; e < ends.size(); ++e) {
    const std::string at = "[" + std::to_string(e) + "]";
    const auto uv = integers(ends[e], where + ": edges.nodes" + at);
    if (uv.size() != 2) throw common::InputError(where + ": edges.nodes" + at + " is not [u, v]");
    for (int64_t x : uv) {
      if (x < 0 || x >= n) throw common::InputError(where + ": edges.nodes" + at + " names node " + std::to_string(x) + " of " + std::to_string(n));
    }
    if (uv[0] == uv[1]) throw common::InputError(where + ": edges.nodes" + at + " joins node " + std::to_string(uv[0]) + " to itself");
    ProblemEdge edge{static_cast<int>(uv[0]), static_cast<int>(uv[1]), integers(tables[e], where + ": edges.costs" + at)};
    const std::size_t want = problem.nodes[edge.from].costs.size() * problem.nodes[edge.to].costs.size();
    if (edge.costs.size() != want) {
      throw common::InputError(where + ": edges.costs" + at + " has " + std::to_string(edge.costs.size()) + " entries, expected " +
                           std::to_string(want));
    }
    for (int64_t c : edge.costs) {
      if (c < 0) throw common::InputError(where + ": edges.costs" + at + " holds the negative cost " + std::to_string(c));
    }
    problem.edges.push_back(std::move(edge));
  }
  if (p.contains("usage_limit") && !p.at("usage_limit").is_null()) {
    problem.usage_limit = integer(p.at("usage_limit"), where + ": usage_limit");
    if (*problem.usage_limit < 0) {
      throw common::InputError(where + ": usage_limit " + std::to_string(*problem.usage_limit) + " is negative");
    }
  }
  return problem;
}

Problem load_iopddl(const std::string& path) {
  const std::string text = common::read_file_gz(path);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw common::InputError(path + ": not valid JSON (" + common::json_parse_failure(e) + ")");
  }
  return problem_from_iopddl(root, path);
}

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
