#pragma once
// Helpers shared by the random-graph cross-checks.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::testing {

// A float32 node with no params or attributes.
inline ir::Node op_node(const std::string& name, const std::string& kind, std::vector<int64_t> shape) {
  return ir::Node{name, kind, "", {std::move(shape), ir::DType::float32}, {}, {}, {}};
}

// Size of the search space, saturating once it passes `cap`.
inline int64_t num_assignments(const synth::Problem& problem, int64_t cap) {
  int64_t n = 1;
  for (const auto& node : problem.nodes) {
    if (n > cap) break;
    n *= node.size();
  }
  return n;
}

// The evaluator's own memory check of a plan whose peak is `peak`: it fits
// with the limit at its peak and not one byte below.
inline bool limit_is_tight(synth::Problem problem, const synth::Assignment& a, int64_t peak) {
  problem.usage_limit = peak;
  const bool fits = synth::evaluate(problem, a) < synth::kForbidden;
  problem.usage_limit = peak - 1;
  return fits && synth::evaluate(problem, a) == synth::kForbidden;
}

}  // namespace shardsynth::testing
