// User pins: parsing, resolution on the seed MLP, the optimum under pins,
// and conflict cores checked against brute force on random problems.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "synth/pins.hpp"
#include "synth/solver/test_problems.hpp"
#include "synth/synthesizer.hpp"

namespace shardsynth::synth {
namespace {

std::map<std::string, std::string> specs_of(const ir::Schedule& schedule) {
  std::map<std::string, std::string> out;
  for (const auto& t : schedule.specs) out[t.tensor] = t.spec;
  return out;
}

SynthResult solve_mlp(const std::vector<Pin>& pins, const std::string& model_name, std::optional<int64_t> budget = {}) {
  const auto model = costs::make_cost_model(model_name);
  SynthOptions options;
  options.pins = pins;
  options.lower.memory_budget = budget;
  return synthesize(ir::build_mlp({}), ir::parse_mesh("8"), *model, options);
}

TEST_CASE("parse_pin_FixAndForbid") {
  CHECK(parse_pin("fc1.weight=SR") == Pin{"fc1.weight", "SR", PinKind::fix});
  CHECK(parse_pin("output!=SR") == Pin{"output", "SR", PinKind::forbid});
  CHECK(to_string(parse_pin("h.0.attn.c_attn.weight!=RS")) == "h.0.attn.c_attn.weight!=RS");
}

TEST_CASE("parse_pin_BadTextNamesIt") {
  for (const char* bad : {"fc1", "=SR", "fc1=", "!=SR"}) {
    CHECK_THROWS_WITH_AS(parse_pin(bad), doctest::Contains(bad), ir::InputError);
  }
}

TEST_CASE("synthesize_OptimumRespectsPins") {
  const auto free = solve_mlp({}, "slapo");
  // Megatron's column then row parallel split, pinned by its weights.
  const auto pinned = solve_mlp({parse_pin("fc1.weight=SR"), parse_pin("fc2.weight=RS")}, "slapo");
  const auto specs = specs_of(pinned.schedule);
  CHECK(specs.at("fc1.weight") == "SR");
  CHECK(specs.at("fc2.weight") == "RS");
  CHECK(pinned.search.proven_optimal);
  CHECK(pinned.search.best_cost >= free.search.best_cost);
  CHECK(pinned.search.best_cost == 1048576);  // the slapo volume of fc2's one all-reduce (RR+P->RR)

  // Forbidding the free optimum's output spec of fc1 moves it.
  const std::string fc1 = specs_of(free.schedule).at("fc1");
  const auto forbidden = solve_mlp({Pin{"fc1", fc1, PinKind::forbid}}, "slapo");
  CHECK(specs_of(forbidden.schedule).at("fc1") != fc1);
  CHECK(forbidden.search.best_cost >= free.search.best_cost);
}

TEST_CASE("resolve_pins_BadPinsNameThemselves") {
  CHECK_THROWS_WITH_AS(solve_mlp({parse_pin("nope=RR")}, "slapo"), doctest::Contains("no tensor named 'nope'"), ir::InputError);
  CHECK_THROWS_WITH_AS(solve_mlp({parse_pin("fc1.gamma=RR")}, "slapo"), doctest::Contains("no parameter 'gamma'"), ir::InputError);
  CHECK_THROWS_WITH_AS(solve_mlp({parse_pin("fc1=QQ")}, "slapo"), doctest::Contains("fc1=QQ"), ir::InputError);
  CHECK_THROWS_WITH_AS(solve_mlp({parse_pin("fc1=RS")}, "alpha-beta"), doctest::Contains("describe 3 dims"), ir::InputError);
}

TEST_CASE("apply_pins_MemoryConflictNamesBothPins") {
  // 60 MB per device holds either weight replicated, not both.
  const int64_t budget = 60'000'000;
  CHECK_NOTHROW(solve_mlp({parse_pin("fc1.weight=RR")}, "alpha-beta", budget));
  CHECK_NOTHROW(solve_mlp({parse_pin("fc2.weight=RR")}, "alpha-beta", budget));
  try {
    solve_mlp({parse_pin("fc1.weight=RR"), parse_pin("fc1.bias=R"), parse_pin("fc2.weight=RR")}, "alpha-beta", budget);
    FAIL("expected a conflict");
  } catch (const PinConflictError& e) {
    CHECK(e.conflict() == std::vector<Pin>{parse_pin("fc1.weight=RR"), parse_pin("fc2.weight=RR")});
    CHECK(std::string(e.what()) == "pins conflict: fc1.weight=RR, fc2.weight=RR cannot hold together (2 of 3 pins)");
  }
}

// Whether some assignment satisfies the problem and the pins in `subset`.
bool feasible_with(const Problem& p, const std::vector<ResolvedPin>& pins, const std::vector<int>& subset) {
  bool found = false;
  for_each_assignment(p, [&](const Assignment& a) {
    if (found || evaluate(p, a) >= kForbidden) return;
    for (int i : subset) {
      if (!pins[i].allows[a[pins[i].node]]) return;
    }
    found = true;
  });
  return found;
}

TEST_CASE("conflicting_pins_MinimalCoreMatchesBruteForce") {
  std::mt19937 rng(20261122);
  ProblemMaker maker(rng);
  int conflicts = 0;
  int checked = 0;
  for (int round = 0; round < 400; ++round) {
    const Problem p = maker.random();
    // Feasible problems only: an infeasible one throws without naming pins.
    if (!feasible_with(p, {}, {})) {
      CHECK_THROWS_AS(conflicting_pins(p, {ResolvedPin{0, std::vector<bool>(p.nodes[0].size(), true)}}), ir::InputError);
      continue;
    }
    std::vector<ResolvedPin> pins;
    for (int k = maker.uniform(1, 4); k > 0; --k) {
      ResolvedPin pin{maker.uniform(0, static_cast<int>(p.nodes.size()) - 1), {}};
      for (int s = 0; s < p.nodes[pin.node].size(); ++s) pin.allows.push_back(maker.uniform(0, 2) > 0);
      pins.push_back(pin);
    }
    std::vector<int> all;
    for (int i = 0; i < static_cast<int>(pins.size()); ++i) all.push_back(i);
    const auto core = conflicting_pins(p, pins);
    ++checked;
    CHECK(core.empty() == feasible_with(p, pins, all));
    if (core.empty()) continue;
    ++conflicts;
    CHECK_FALSE(feasible_with(p, pins, core));
    for (std::size_t k = 0; k < core.size(); ++k) {  // minimal: every pin in it is needed
      std::vector<int> without = core;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(k));
      CHECK(feasible_with(p, pins, without));
    }
  }
  CHECK(checked > 200);
  CHECK(conflicts > 30);
}

}  // namespace
}  // namespace shardsynth::synth
