#include "synth/solver/pin_conflict.hpp"

#include <algorithm>
#include <string>

#include <z3++.h>

#include "common/error.hpp"
#include "synth/solver/z3_encoding.hpp"

namespace shardsynth::synth {
namespace {

std::vector<int> conflict_core(const Problem& problem, const std::vector<ResolvedPin>& pins) {
  z3::context ctx;
  const Z3Encoding encoding(ctx, problem, EncodingKind::one_hot);
  z3::solver solver(ctx);
  for (const auto& c : encoding.constraints()) solver.add(c);
  // One literal per pin: literal -> the node picks a strategy the pin allows.
  std::vector<z3::expr> literals;
  for (std::size_t i = 0; i < pins.size(); ++i) {
    z3::expr literal = ctx.bool_const(("pin" + std::to_string(i)).c_str());
    z3::expr_vector allowed(ctx);
    for (std::size_t s = 0; s < pins[i].allows.size(); ++s) {
      if (pins[i].allows[s]) allowed.push_back(encoding.picks(pins[i].node, static_cast<int>(s)));
    }
    solver.add(z3::implies(literal, allowed.empty() ? ctx.bool_val(false) : z3::mk_or(allowed)));
    literals.push_back(literal);
  }
  auto check = [&](const std::vector<int>& subset) {
    z3::expr_vector assumptions(ctx);
    for (int i : subset) assumptions.push_back(literals[i]);
    return solver.check(assumptions);
  };
  std::vector<int> all(pins.size());
  for (std::size_t i = 0; i < pins.size(); ++i) all[i] = static_cast<int>(i);
  const z3::check_result first = check(all);
  if (first == z3::sat) return {};
  if (first == z3::unknown) throw common::InputError("the pins could not be checked: Z3 answered unknown (" + solver.reason_unknown() + ")");

  std::vector<int> core;
  const z3::expr_vector z3_core = solver.unsat_core();
  for (unsigned k = 0; k < z3_core.size(); ++k) {
    const std::string name = z3_core[k].decl().name().str();
    core.push_back(std::stoi(name.substr(3)));
  }
  std::sort(core.begin(), core.end());
  if (core.empty()) throw common::InputError("the problem has no plan even without pins (e.g. the memory budget is too small)");
  // Deletion: drop each pin whose absence keeps the rest unsatisfiable.
  for (std::size_t k = 0; k < core.size();) {
    std::vector<int> without = core;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(k));
    if (check(without) == z3::unsat) {
      core = std::move(without);
    } else {
      ++k;
    }
  }
  return core;
}

}  // namespace

std::vector<int> conflicting_pins(const Problem& problem, const std::vector<ResolvedPin>& pins) {
  try {
    return conflict_core(problem, pins);
  } catch (const z3::exception& e) {
    throw SolverError(std::string("z3: ") + e.msg());
  }
}

}  // namespace shardsynth::synth
