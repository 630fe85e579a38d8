// synth::Problem built by hand: validate, evaluate and edge_cost; usage
// rows against their definition on random liveness intervals.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {
namespace {

// Five nodes a(2) b(3) c(2) d(1) e(2), six edges, two of them parallel (a->b).
Problem five_nodes() {
  Problem p;
  p.name = "five";
  p.nodes = {
      {"a", {1, 2}, {}, 0, 0},
      {"b", {0, 5, 3}, {}, 0, 0},
      {"c", {4, 0}, {}, 0, 0},
      {"d", {7}, {}, 0, 0},
      {"e", {0, 10}, {}, 0, 0},
  };
  p.edges = {
      {0, 1, {10, 20, 30, 40, 50, 60}},  // a->b, 2x3
      {1, 2, {1, 2, 3, 4, 5, 6}},        // b->c, 3x2
      {2, 3, {100, 200}},                // c->d, 2x1
      {3, 4, {8, 9}},                    // d->e, 1x2
      {0, 4, {11, 12, 13, 14}},          // a->e, 2x2
      {0, 1, {0, 1, 2, 3, 4, 5}},        // a->b again, parallel
  };
  return p;
}

}  // namespace

TEST_CASE("validate_WellFormedProblem") {
  CHECK_NOTHROW(validate(five_nodes()));
  Problem p = five_nodes();
  p.nodes[0].usages = {16, 32};
  CHECK_NOTHROW(validate(p));
  p.nodes[2].costs[1] = kForbidden;
  p.edges[1].costs[3] = kForbidden;
  CHECK_NOTHROW(validate(p));
}

TEST_CASE("evaluate_ExactTotals") {
  const Problem p = five_nodes();
  // nodes 1+0+4+7+0 = 12; edges 10+1+100+8+11+0 = 130.
  CHECK(evaluate(p, {0, 0, 0, 0, 0}) == 142);
  // nodes 2+3+0+7+10 = 22; edges 60+6+200+9+14+5 = 294.
  CHECK(evaluate(p, {1, 2, 1, 0, 1}) == 316);
  // nodes 1+5+0+7+10 = 23; edges 20+4+200+9+12+1 = 246.
  CHECK(evaluate(p, {0, 1, 1, 0, 1}) == 269);
  // nodes 2+0+4+7+0 = 13; edges 40+1+100+8+13+3 = 165.
  CHECK(evaluate(p, {1, 0, 0, 0, 0}) == 178);
}

TEST_CASE("evaluate_MinimumByEnumeration") {
  // All 24 assignments by hand-rolled loops; the cheapest is all zeros (142),
  // the runner-up {0,0,0,0,1}: nodes 1+0+4+7+10 = 22; edges 10+1+100+9+12+0 = 132.
  const Problem p = five_nodes();
  int64_t best = kForbidden;
  Assignment arg;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 2; ++c) {
        for (int e = 0; e < 2; ++e) {
          const Assignment x{a, b, c, 0, e};
          const int64_t cost = evaluate(p, x);
          if (cost < best) {
            best = cost;
            arg = x;
          }
        }
      }
    }
  }
  CHECK(best == 142);
  CHECK(arg == Assignment{0, 0, 0, 0, 0});
  CHECK(evaluate(p, {0, 0, 0, 0, 1}) == 154);
  // nodes 1+0+0+7+0 = 8; edges 10+2+200+8+11+0 = 231.
  CHECK(evaluate(p, {0, 0, 1, 0, 0}) == 239);
}

TEST_CASE("edge_cost_RowMajorIndex") {
  const Problem p = five_nodes();
  const Assignment x{1, 2, 1, 0, 1};
  CHECK(edge_cost(p, p.edges[0], x) == 60);  // row 1 of 3 columns, column 2
  CHECK(edge_cost(p, p.edges[1], x) == 6);   // row 2 of 2 columns, column 1
  CHECK(edge_cost(p, p.edges[2], x) == 200);
  CHECK(edge_cost(p, p.edges[3], x) == 9);
  CHECK(edge_cost(p, p.edges[4], x) == 14);
  CHECK(edge_cost(p, p.edges[5], x) == 5);
  const Assignment y{0, 1, 0, 0, 1};
  CHECK(edge_cost(p, p.edges[0], y) == 20);
  CHECK(edge_cost(p, p.edges[1], y) == 3);
  CHECK(edge_cost(p, p.edges[4], y) == 12);
}

TEST_CASE("evaluate_ForbiddenStrategy") {
  Problem p = five_nodes();
  p.nodes[2].costs[1] = kForbidden;
  CHECK(evaluate(p, {1, 2, 1, 0, 1}) == kForbidden);
  CHECK(evaluate(p, {0, 1, 1, 0, 1}) == kForbidden);
  CHECK(evaluate(p, {0, 0, 0, 0, 0}) == 142);  // other choices unaffected
}

TEST_CASE("evaluate_ForbiddenEdgePair") {
  Problem p = five_nodes();
  p.edges[1].costs[2 * 2 + 1] = kForbidden;  // b = 2, c = 1
  CHECK(evaluate(p, {1, 2, 1, 0, 1}) == kForbidden);
  // nodes 2+3+4+7+10 = 26; edges 60+5+100+9+14+5 = 193.
  CHECK(evaluate(p, {1, 2, 0, 0, 1}) == 219);
  CHECK(evaluate(p, {0, 0, 0, 0, 0}) == 142);

  // A forbidden pair on only one of two parallel edges still forbids it.
  Problem q = five_nodes();
  q.edges[5].costs[0] = kForbidden;
  CHECK(evaluate(q, {0, 0, 0, 0, 0}) == kForbidden);
  CHECK(evaluate(q, {0, 1, 1, 0, 1}) == 269);
}

TEST_CASE("validate_WrongTableSizeThrows") {
  Problem p = five_nodes();
  p.edges[0].costs.pop_back();
  CHECK_THROWS_AS(validate(p), std::invalid_argument);

  Problem q = five_nodes();
  q.edges[3].costs.push_back(1);
  CHECK_THROWS_AS(validate(q), std::invalid_argument);

  Problem r = five_nodes();
  r.edges[2].costs.clear();
  CHECK_THROWS_AS(validate(r), std::invalid_argument);
}

TEST_CASE("validate_EdgeToMissingNodeThrows") {
  Problem p = five_nodes();
  p.edges.push_back({0, 5, {1, 2}});
  CHECK_THROWS_AS(validate(p), std::invalid_argument);

  Problem q = five_nodes();
  q.edges.push_back({-1, 3, {1}});
  CHECK_THROWS_AS(validate(q), std::invalid_argument);

  Problem r = five_nodes();
  r.edges[0].to = 7;
  CHECK_THROWS_AS(validate(r), std::invalid_argument);
}

TEST_CASE("validate_OtherMalformedPartsThrow") {
  Problem p = five_nodes();
  p.nodes[1].costs[0] = -1;
  CHECK_THROWS_AS(validate(p), std::invalid_argument);

  Problem q = five_nodes();
  q.edges[4].costs[2] = -5;
  CHECK_THROWS_AS(validate(q), std::invalid_argument);

  Problem r = five_nodes();
  r.nodes[3].costs.clear();
  r.edges[2].costs.clear();
  r.edges[3].costs.clear();
  CHECK_THROWS_AS(validate(r), std::invalid_argument);

  Problem s = five_nodes();
  s.nodes[0].usages = {1, 2, 3};
  CHECK_THROWS_AS(validate(s), std::invalid_argument);
}

TEST_CASE("evaluate_WrongAssignmentThrows") {
  const Problem p = five_nodes();
  CHECK_THROWS_AS(evaluate(p, {0, 0, 0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(evaluate(p, {0, 0, 0, 0, 0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(evaluate(p, {}), std::invalid_argument);
  CHECK_THROWS_AS(evaluate(p, {0, 3, 0, 0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(evaluate(p, {-1, 0, 0, 0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(evaluate(p, {0, 0, 0, 1, 0}), std::invalid_argument);
}

namespace {

// usage_rows by its definition: the live set at every check point, kept
// when no other live set strictly contains it, first occurrences only.
std::vector<std::vector<int>> usage_rows_by_definition(const Problem& p) {
  std::vector<std::vector<int>> rows;
  std::set<std::vector<int>> seen;
  for (int64_t t : usage_check_points(p)) {
    std::vector<int> live;
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const auto& node = p.nodes[i];
      if (node.live_from <= t && t < node.live_to && !node.usages.empty()) live.push_back(static_cast<int>(i));
    }
    if (!live.empty() && seen.insert(live).second) rows.push_back(live);
  }
  std::vector<std::vector<int>> kept;
  for (const auto& row : rows) {
    const bool contained = std::any_of(rows.begin(), rows.end(), [&](const std::vector<int>& other) {
      return other.size() > row.size() && std::includes(other.begin(), other.end(), row.begin(), row.end());
    });
    if (!contained) kept.push_back(row);
  }
  return kept;
}

}  // namespace

TEST_CASE("usage_rows_MatchesDefinitionOnRandomIntervals") {
  std::mt19937 rng(5);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int nonempty = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Problem p;
    const int n = uniform(1, 12);
    for (int i = 0; i < n; ++i) {
      ProblemNode node{"n" + std::to_string(i), {0}, {}, 0, 0};
      if (uniform(0, 5) > 0) node.usages = {uniform(0, 5)};  // some nodes carry no usages
      node.live_from = uniform(0, 8);
      node.live_to = node.live_from + uniform(-1, 5);  // sometimes empty or reversed: never live
      p.nodes.push_back(node);
    }
    const auto rows = usage_rows(p);
    CHECK(rows == usage_rows_by_definition(p));
    nonempty += rows.size() > 1 ? 1 : 0;
  }
  CHECK(nonempty > 500);  // the trials exercise containment between several rows
}

}  // namespace shardsynth::synth
