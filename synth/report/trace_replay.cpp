#include "synth/report/trace_replay.hpp"

#include <cstdio>

#include "ir/error.hpp"
#include "ir/text_table.hpp"
#include "synth/report/iteration_table.hpp"

namespace shardsynth::synth {

std::string iteration_block(const std::vector<std::string>& labels, const nlohmann::json& step,
                            std::optional<int64_t> best_before) {
  std::string text = iteration_header(step.at("step").get<int>()) + "\n";
  const auto status = step.at("status").get<std::string>();
  if (status == "sat") {
    text += model_text(labels, step.at("assignment").get<Assignment>()) + "\n";
    text += ir::as_logged(table_from_json(step)) + "\n\n";
  } else if (status == "unsat") {
    const auto& bound = step.at("bound");
    if (!bound.is_null() && best_before && bound.get<int64_t>() == *best_before) {
      text += "Cannot find better solutions\n";
    } else {
      text += "No solution below " + (bound.is_null() ? std::string("any bound") : std::to_string(bound.get<int64_t>())) + "\n";
    }
  }
  return text;
}

std::string recorded_iteration(const TraceFile& trace, int64_t index) {
  if (index < 0 || index >= static_cast<int64_t>(trace.steps.size())) {
    throw ir::InputError("--iter " + std::to_string(index) + ": the trace has steps 0 to " +
                         std::to_string(static_cast<int64_t>(trace.steps.size()) - 1));
  }
  std::optional<int64_t> best_before;
  for (int64_t i = 0; i < index; ++i) {
    if (trace.steps[i].at("status") == "sat") best_before = trace.steps[i].at("cost").get<int64_t>();
  }
  return iteration_block(trace.labels, trace.steps[index], best_before);
}

std::string trace_summary(const TraceFile& trace) {
  std::vector<std::vector<std::string>> rows;
  std::optional<int64_t> best;
  bool proven = false;
  for (const auto& step : trace.steps) {
    const auto status = step.at("status").get<std::string>();
    const auto& bound = step.at("bound");
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", step.at("solver_ms").get<double>());
    std::string source = step.at("source").get<std::string>();
    if (step.value("relaxed", false)) source += " (relaxed)";
    rows.push_back({std::to_string(step.at("step").get<int>()), source,
                    bound.is_null() ? "-" : "< " + std::to_string(bound.get<int64_t>()), status,
                    status == "sat" ? std::to_string(step.at("cost").get<int64_t>()) : "", ms});
    if (status == "sat" && !step.value("relaxed", false) && (!best || step.at("cost").get<int64_t>() < *best)) {
      best = step.at("cost").get<int64_t>();
    }
    proven = status == "unsat" && best && !bound.is_null() && bound.get<int64_t>() == *best;
  }
  std::string text = ir::format_table({"Step", "Source", "Bound", "Status", "Cost", "ms"}, rows) + "\n";
  if (!best) return text + "no assignment found\n";
  return text + "best cost " + std::to_string(*best) + (proven ? ", proven optimal" : ", not proven optimal") + "\n";
}

}  // namespace shardsynth::synth
