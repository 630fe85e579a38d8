#pragma once
// The IOPDDL contest format (ASPLOS/EuroSys 2025 intra-operator parallelism
// contest, google/iopddl) for plain Problems and their solutions.
//
// A problem is JSON under "problem": nodes.intervals[i] = [start, end)
// (liveness, half open), nodes.costs[i][s], nodes.usages[i][s], edges.nodes[e]
// = [u, v], edges.costs[e] flattened row-major over (strategy of u, strategy
// of v), optional usage_limit and name. 10^18 marks a forbidden choice. A
// solution is a JSON array holding one strategy index per node.
#include <string>

#include <nlohmann/json.hpp>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// Parses a contest problem. Throws common::InputError naming the offending
// field and index (`where` prefixes the message, e.g. the file name).
Problem problem_from_iopddl(const nlohmann::json& json, const std::string& where);
// Reads a contest problem from a file, gzip-compressed or plain, as a stream
// (no whole text or JSON document in memory); same checks and messages as
// problem_from_iopddl, and `path: not valid JSON (...)` for a bad text.
Problem load_iopddl(const std::string& path);
// The problem in contest format (labels are not part of the format).
nlohmann::json problem_to_iopddl(const Problem& problem);

// A solution as the contest writes it: one strategy index per node.
nlohmann::json solution_to_iopddl(const Assignment& assignment);
// Parses a solution for `problem`; throws common::InputError when its length
// or an index does not fit.
Assignment solution_from_iopddl(const nlohmann::json& json, const Problem& problem, const std::string& where);

}  // namespace shardsynth::synth
