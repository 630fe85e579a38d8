#include "fuzz/fuzz_targets.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "ir/error.hpp"
#include "ir/graph_json.hpp"
#include "ir/schedule.hpp"
#include "ir/spec.hpp"
#include "runtime/safetensors.hpp"
#include "synth/solver/iopddl.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::fuzz {
namespace {

using nlohmann::json;

// The bytes as JSON, or null when they are not JSON (the readers' callers
// turn that into an InputError before the reader sees it).
bool parse(std::string_view bytes, json& out) {
  try {
    out = json::parse(bytes.begin(), bytes.end());
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

// A broken invariant: not an input error, so libFuzzer sees a crash and the
// replay test a failure.
[[noreturn]] void bug(const std::string& what) { throw std::logic_error("fuzz invariant broken: " + what); }

}  // namespace

void graph_json(std::string_view bytes) {
  json j;
  if (!parse(bytes, j)) return;
  for (auto policy : {ir::UnknownOps::error, ir::UnknownOps::replicate}) {
    try {
      std::vector<std::string> warnings;
      const ir::Graph graph = ir::graph_from_json(j, "fuzz.json", {policy, &warnings});
      const json written = ir::graph_to_json(graph);
      const json again = ir::graph_to_json(ir::graph_from_json(written, "written.json"));
      if (again != written) bug("graph_to_json(graph_from_json(graph_to_json(g))) differs");
    } catch (const ir::InputError&) {
    }
  }
}

void iopddl(std::string_view bytes) {
  json j;
  if (!parse(bytes, j)) return;
  try {
    const synth::Problem problem = synth::problem_from_iopddl(j, "fuzz.json");
    const json written = synth::problem_to_iopddl(problem);
    if (synth::problem_to_iopddl(synth::problem_from_iopddl(written, "written.json")) != written) {
      bug("problem_to_iopddl does not round-trip");
    }
    // Every in-range assignment scores without overflow; the all-first and
    // all-last assignments stand in for them.
    for (bool last : {false, true}) {
      synth::Assignment a;
      for (const auto& node : problem.nodes) a.push_back(last ? node.size() - 1 : 0);
      const int64_t cost = synth::evaluate(problem, a);
      if (cost < 0 || cost > synth::kForbidden) bug("evaluate returned " + std::to_string(cost));
      if ((cost < synth::kForbidden) != (synth::cost_without_usage(problem, a) < synth::kForbidden &&
                                          synth::within_usage_limit(problem, a))) {
        bug("evaluate disagrees with cost_without_usage and within_usage_limit");
      }
      synth::solution_from_iopddl(synth::solution_to_iopddl(a), problem, "solution.json");
    }
  } catch (const ir::InputError&) {
  }
}

void spec(std::string_view bytes) {
  if (bytes.empty()) return;
  const int mesh_rank = 1 + (static_cast<unsigned char>(bytes[0]) & 1);
  const std::string_view text = bytes.substr(1);
  try {
    const ir::Spec parsed = ir::parse_spec(text, mesh_rank);
    const std::string printed = ir::to_string(parsed, mesh_rank);
    if (ir::parse_spec(printed, mesh_rank) != parsed) bug("'" + printed + "' parses to another spec");
  } catch (const ir::InputError&) {
  }
}

void schedule(std::string_view bytes) {
  json j;
  if (!parse(bytes, j)) return;
  try {
    const json written = ir::to_json(ir::schedule_from_json(j, "fuzz.json"));
    if (ir::to_json(ir::schedule_from_json(written, "written.json")) != written) bug("schedule does not round-trip");
  } catch (const ir::InputError&) {
  }
}

void safetensors(std::string_view bytes) {
  try {
    for (const auto& [name, tensor] : runtime::parse_safetensors(std::string(bytes), "fuzz.safetensors")) {
      if (static_cast<int64_t>(tensor.data.size()) != tensor.numel()) bug("tensor '" + name + "' size differs from its shape");
    }
  } catch (const ir::InputError&) {
  }
}

const std::vector<NamedTarget>& targets() {
  static const std::vector<NamedTarget> all{
      {"graph_json", graph_json}, {"iopddl", iopddl}, {"spec", spec}, {"schedule", schedule}, {"safetensors", safetensors}};
  return all;
}

}  // namespace shardsynth::fuzz
