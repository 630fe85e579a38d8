#include "synth/solver/iopddl_raw.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "common/error.hpp"

namespace shardsynth::synth {
namespace {

using nlohmann::json;

// Fills `table` from parent[key], as written.
void fill_table(const json& parent, const char* key, RawTable& table) {
  if (!parent.is_object() || !parent.contains(key)) return table.reset(RawPresence::kMissing);
  const json& value = parent.at(key);
  if (!value.is_array()) return table.reset(RawPresence::kNotArray);
  table.reset(RawPresence::kArray);
  for (std::size_t r = 0; r < value.size(); ++r) {
    const json& row = value[r];
    if (!row.is_array()) {
      table.faults.push_back({r, -1, ""});
    } else {
      for (std::size_t j = 0; j < row.size(); ++j) {
        int64_t v = 0;
        std::string reason = integer_fault(row[j], v);
        if (!reason.empty()) {
          table.faults.push_back({r, static_cast<std::ptrdiff_t>(j), std::move(reason)});
          break;
        }
        table.values.push_back(v);
      }
    }
    table.end_row();
  }
}

// Throws unless the table `field` under `parent` (e.g. "nodes") is an array.
void require_array(const RawTable& table, const std::string& where, const char* parent, const char* field) {
  if (table.presence == RawPresence::kMissing) throw common::InputError(where + ": " + parent + ": missing '" + field + "'");
  if (table.presence == RawPresence::kNotArray) {
    throw common::InputError(where + ": " + parent + "." + field + ": expected an array");
  }
}

// Row r of a table; throws its fault, if any (`where` names the row).
std::span<const int64_t> row(const RawTable& table, std::size_t r, const std::string& where) {
  const auto fault = std::lower_bound(table.faults.begin(), table.faults.end(), r,
                                      [](const RawFault& f, std::size_t row) { return f.row < row; });
  if (fault != table.faults.end() && fault->row == r) {
    if (fault->entry < 0) throw common::InputError(where + ": expected an array");
    throw common::InputError(where + "[" + std::to_string(fault->entry) + "]: " + fault->reason);
  }
  return {table.values.data() + table.starts[r], table.starts[r + 1] - table.starts[r]};
}

std::vector<int64_t> to_vector(std::span<const int64_t> values) { return {values.begin(), values.end()}; }

}  // namespace

void RawTable::reset(RawPresence now) {
  presence = now;
  values.clear();
  starts.assign(1, 0);
  faults.clear();
}

std::string integer_fault(const json& value, int64_t& out) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(kForbidden)) return value.dump() + " is above 10^18";
    out = static_cast<int64_t>(v);
    return "";
  }
  if (value.is_number_integer()) {
    out = value.get<int64_t>();
    return "";
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    // Range first: casting a double beyond int64 is undefined (found by fuzzing: 1.1e116).
    if (d >= 0 && d <= 1e18 && d == std::floor(d)) {
      out = static_cast<int64_t>(d);
      return "";
    }
  }
  return "expected an integer, got " + value.dump();
}

RawIopddl raw_from_json(const json& root) {
  RawIopddl raw;
  if (!root.is_object() || !root.contains("problem")) return raw;
  raw.has_problem = true;
  const json& p = root.at("problem");
  if (!p.is_object()) return raw;
  if (p.contains("name") && p.at("name").is_string()) raw.name = p.at("name").get<std::string>();
  if (p.contains("nodes")) {
    raw.has_nodes = true;
    const json& nodes = p.at("nodes");
    fill_table(nodes, "intervals", raw.intervals);
    fill_table(nodes, "costs", raw.node_costs);
    fill_table(nodes, "usages", raw.usages);
  }
  if (p.contains("edges")) {
    raw.has_edges = true;
    const json& edges = p.at("edges");
    fill_table(edges, "nodes", raw.edge_nodes);
    fill_table(edges, "costs", raw.edge_costs);
  }
  if (p.contains("usage_limit")) raw.usage_limit = p.at("usage_limit");
  return raw;
}

Problem problem_from_raw(RawIopddl raw, const std::string& where) {
  if (!raw.has_problem) throw common::InputError(where + ": missing 'problem'");
  Problem problem;
  problem.name = raw.name;
  if (!raw.has_nodes) throw common::InputError(where + ": problem: missing 'nodes'");
  require_array(raw.intervals, where, "nodes", "intervals");
  require_array(raw.node_costs, where, "nodes", "costs");
  require_array(raw.usages, where, "nodes", "usages");
  const std::size_t node_count = raw.node_costs.rows();
  if (raw.intervals.rows() != node_count || raw.usages.rows() != node_count) {
    throw common::InputError(where + ": nodes.intervals, nodes.costs and nodes.usages have " + std::to_string(raw.intervals.rows()) +
                             ", " + std::to_string(node_count) + " and " + std::to_string(raw.usages.rows()) + " entries");
  }
  problem.nodes.reserve(node_count);
  for (std::size_t i = 0; i < node_count; ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    ProblemNode node;
    node.label = "n" + std::to_string(i);
    node.costs = to_vector(row(raw.node_costs, i, where + ": nodes.costs" + at));
    node.usages = to_vector(row(raw.usages, i, where + ": nodes.usages" + at));
    const auto interval = row(raw.intervals, i, where + ": nodes.intervals" + at);
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
  // The node tables are in the Problem now: give their memory back before the edges'.
  raw.intervals = {};
  raw.node_costs = {};
  raw.usages = {};
  if (!raw.has_edges) throw common::InputError(where + ": problem: missing 'edges'");
  require_array(raw.edge_nodes, where, "edges", "nodes");
  require_array(raw.edge_costs, where, "edges", "costs");
  const std::size_t edge_count = raw.edge_nodes.rows();
  if (raw.edge_costs.rows() != edge_count) {
    throw common::InputError(where + ": edges.nodes and edges.costs have " + std::to_string(edge_count) + " and " +
                             std::to_string(raw.edge_costs.rows()) + " entries");
  }
  const auto n = static_cast<int64_t>(problem.nodes.size());
  problem.edges.reserve(edge_count);
  for (std::size_t e = 0; e < edge_count; ++e) {
    const std::string at = "[" + std::to_string(e) + "]";
    const auto uv = row(raw.edge_nodes, e, where + ": edges.nodes" + at);
    if (uv.size() != 2) throw common::InputError(where + ": edges.nodes" + at + " is not [u, v]");
    for (int64_t x : uv) {
      if (x < 0 || x >= n) {
        throw common::InputError(where + ": edges.nodes" + at + " names node " + std::to_string(x) + " of " + std::to_string(n));
      }
    }
    if (uv[0] == uv[1]) throw common::InputError(where + ": edges.nodes" + at + " joins node " + std::to_string(uv[0]) + " to itself");
    ProblemEdge edge{static_cast<int>(uv[0]), static_cast<int>(uv[1]), to_vector(row(raw.edge_costs, e, where + ": edges.costs" + at))};
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
  if (!raw.usage_limit.is_null()) {
    int64_t limit = 0;
    const std::string reason = integer_fault(raw.usage_limit, limit);
    if (!reason.empty()) throw common::InputError(where + ": usage_limit: " + reason);
    if (limit < 0) throw common::InputError(where + ": usage_limit " + std::to_string(limit) + " is negative");
    problem.usage_limit = limit;
  }
  return problem;
}

}  // namespace shardsynth::synth
