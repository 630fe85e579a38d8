#include "synth/report/trace_jsonl.hpp"

#include <sstream>
#include <utility>

#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "ir/json_field.hpp"

namespace shardsynth::synth {

std::string status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::sat:
      return "sat";
    case CheckStatus::unsat:
      return "unsat";
    case CheckStatus::unknown:
      break;
  }
  return "unknown";
}

std::vector<std::string> problem_labels(const Lowered& lowered) {
  std::vector<std::string> labels;
  for (int n : decision_nodes(lowered)) labels.push_back(lowered.problem.nodes[n].label);
  return labels;
}

nlohmann::json trace_header(const Lowered& lowered, const nlohmann::json& options) {
  return {{"format", kTraceFormat}, {"labels", problem_labels(lowered)}, {"options", options}};
}

nlohmann::json iteration_to_json(const Lowered& lowered, const Iteration& it) {
  nlohmann::json j = {{"step", it.index},
                      {"source", it.source},
                      {"relaxed", it.relaxed},
                      {"bound", it.bound ? nlohmann::json(*it.bound) : nlohmann::json(nullptr)},
                      {"status", status_name(it.status)},
                      {"solver_ms", it.solver_ms}};
  if (it.status != CheckStatus::sat) return j;
  j["cost"] = it.cost;
  Assignment decided;
  for (int n : decision_nodes(lowered)) decided.push_back(it.assignment.at(n));
  j["assignment"] = decided;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : iteration_rows(lowered, it.assignment)) {
    rows.push_back({{"name", row.name}, {"in_spec", row.in_spec}, {"out_spec", row.out_spec}, {"cost", row.cost}});
  }
  j["rows"] = rows;
  j["total"] = evaluate(lowered.problem, it.assignment);
  return j;
}

JsonlTraceWriter::JsonlTraceWriter(std::string path, nlohmann::json options)
    : path_(std::move(path)), options_(std::move(options)) {}

void JsonlTraceWriter::add(const Lowered& lowered, const Iteration& iteration) {
  if (text_.empty()) text_ = trace_header(lowered, options_).dump() + "\n";
  text_ += iteration_to_json(lowered, iteration).dump() + "\n";
}

void JsonlTraceWriter::finish() const {
  ir::write_file_atomic(path_, text_.empty() ? nlohmann::json{{"format", kTraceFormat}, {"labels", nlohmann::json::array()},
                                                              {"options", options_}}.dump() + "\n"
                                             : text_);
}

namespace {

void check_step(const nlohmann::json& step, std::size_t index, std::size_t labels, const std::string& where,
                const std::string& path) {
  if (ir::json_field<std::size_t>(step, "step", where, path) != index) {
    throw ir::InputError(path + ": " + where + " is step " + step.at("step").dump() + ", expected " + std::to_string(index));
  }
  const auto status = ir::json_field<std::string>(step, "status", where, path);
  if (status != "sat" && status != "unsat" && status != "unknown") {
    throw ir::InputError(path + ": " + where + " has status '" + status + "' (known: sat, unsat, unknown)");
  }
  ir::json_field<double>(step, "solver_ms", where, path);
  if (!step.contains("bound")) throw ir::InputError(path + ": " + where + " lacks field 'bound'");
  if (!step.at("bound").is_null()) ir::json_field<int64_t>(step, "bound", where, path);  // null: no bound asked
  if (status != "sat") return;
  ir::json_field<int64_t>(step, "cost", where, path);
  ir::json_field<int64_t>(step, "total", where, path);
  if (ir::json_field<std::vector<int>>(step, "assignment", where, path).size() != labels) {
    throw ir::InputError(path + ": " + where + "'s assignment does not have one entry per label (" + std::to_string(labels) + ")");
  }
  const auto rows = ir::json_field<nlohmann::json>(step, "rows", where, path);
  if (!rows.is_array()) throw ir::InputError(path + ": field 'rows' of " + where + " has the wrong type");
  for (const auto& row : rows) {
    const std::string row_where = where + " row " + row.dump();
    ir::json_field<std::string>(row, "name", row_where, path);
    ir::json_field<std::string>(row, "in_spec", row_where, path);
    ir::json_field<std::string>(row, "out_spec", row_where, path);
    ir::json_field<int64_t>(row, "cost", row_where, path);
  }
}

}  // namespace

TraceFile read_trace(const std::string& path) {
  std::istringstream in(ir::read_file(path));
  TraceFile trace;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const std::string where = "line " + std::to_string(line_number);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw ir::InputError(path + ": " + where + " is not valid JSON (byte " + std::to_string(e.byte) + ")");
    }
    if (line_number == 1) {
      if (!j.is_object() || j.value("format", std::string()) != kTraceFormat) {
        throw ir::InputError(path + ": not a shardsynth trace (line 1 lacks \"format\": \"" + std::string(kTraceFormat) + "\")");
      }
      trace.labels = ir::json_field<std::vector<std::string>>(j, "labels", "the header", path);
      trace.header = std::move(j);
      continue;
    }
    check_step(j, trace.steps.size(), trace.labels.size(), where, path);
    trace.steps.push_back(std::move(j));
  }
  if (line_number == 0) throw ir::InputError(path + ": not a shardsynth trace (the file is empty)");
  return trace;
}

std::string table_from_json(const nlohmann::json& step) {
  std::vector<IterationRow> rows;
  for (const auto& row : step.at("rows")) {
    rows.push_back({row.at("name").get<std::string>(), row.at("in_spec").get<std::string>(),
                    row.at("out_spec").get<std::string>(), row.at("cost").get<int64_t>()});
  }
  return format_iteration_rows(rows, step.at("total").get<int64_t>());
}

}  // namespace shardsynth::synth
