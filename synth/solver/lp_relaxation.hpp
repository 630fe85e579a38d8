#pragma once
// The linear-programming relaxation of a Problem, solved with Clp (COIN-OR).
//
// Columns: x[v][s] per allowed strategy (node v takes s) and y[e][s,t] per
// allowed pair of an edge's table; forbidden choices get no column. Rows:
// each node takes one strategy (sum_s x[v][s] = 1); each edge's pair
// marginals equal its end nodes' choices (the local polytope); and, with a
// usage limit, the usage of each set of co-live nodes (usage_rows) is at
// most the limit. Memory rows are added lazily: the LP is solved without
// them, then every row its solution violates is added and it is solved
// again, until none is violated; rows it never violated do not change its
// optimum. The result is the LP optimum over every row, unless the round or
// time limit stops the loop first.
//
// The lower bound is not Clp's objective but one recomputed from its duals
// in long double (the bound of any dual vector, by weak duality): the
// duals' right-hand side plus each node's and each edge's least reduced
// cost. A slightly infeasible dual from floating point only weakens it, so
// it is a true bound on every assignment within the limit, and the reduced
// costs it leaves license fixing (reduced_cost_fixing.hpp).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

struct LpOptions {
  std::optional<std::chrono::steady_clock::time_point> deadline;  // Clp's wall-clock limit (unset = none)
  int64_t max_columns = 1'500'000;  // not solved (outcome "too large") when the LP would have more columns
  int64_t max_nonzeros = 6'000'000;  // nor when its memory rows would hold more coefficients than this
  int max_rounds = 40;               // solves at most, each adding the memory rows the last one violated
  std::optional<std::vector<std::vector<int>>> rows;  // the memory rows to use (node sets, ascending) instead of every co-live set (unset: usage_rows)
};

struct LpRelaxation {
  std::string outcome = "not run";  // "optimal", "time limit", "round limit", "too large", "infeasible", "failed"
  int64_t bound = 0;                // no assignment within the limit costs less (0 when nothing was solved)
  double bound_exact = 0;           // the same bound before rounding up, in cost units
  std::vector<std::vector<double>> values;        // per node, per strategy: x in the last LP solution (0 for forbidden)
  std::vector<std::vector<double>> node_reduced;  // per node, per strategy: reduced cost, cost units (+inf for forbidden)
  std::vector<std::vector<double>> edge_reduced;  // per edge, row-major like its table: reduced cost (+inf for forbidden)
  std::vector<std::vector<double>> from_duals;    // per edge, per strategy of `from`: dual of its marginal row, cost units (0 for forbidden); a pair's reduced cost is its cost minus from_duals and to_duals
  std::vector<std::vector<double>> to_duals;      // per edge, per strategy of `to`: dual of its marginal row, cost units (0 for forbidden)
  int64_t columns = 0;              // LP columns (x and y)
  int memory_rows = 0;              // memory rows added (of usage_rows)
  std::vector<double> binding_duals;  // per binding row: minus its dual, cost units per limit (>0): usage u on it adds binding_duals * u / limit to a reduced cost
  std::vector<std::vector<int>> binding_rows;  // node sets (ascending) of the memory rows whose dual is nonzero: the rows the bound and reduced costs lean on
  int rounds = 0;                   // Clp solves run
  double ms = 0;                    // wall time, milliseconds

  // Whether bound, values and reduced costs come from a dual solution.
  bool has_duals() const { return !node_reduced.empty(); }
};

// Solves the relaxation of `problem` (usually an exactly reduced kernel).
LpRelaxation solve_lp_relaxation(const Problem& problem, const LpOptions& options = {});

}  // namespace shardsynth::synth
