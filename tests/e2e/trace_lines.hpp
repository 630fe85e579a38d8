#pragma once
// A recorded trace (docs/trace_jsonl.md) as comparable values: every line
// parsed, with the one field that differs between runs (`solver_ms`, wall
// time) left out.
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardsynth::testing {

inline std::vector<nlohmann::json> untimed_trace_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    j.erase("solver_ms");
    lines.push_back(j);
  }
  return lines;
}

}  // namespace shardsynth::testing
