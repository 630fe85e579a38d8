#include "synth/solver/lp_relaxation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Where each variable and equality row of the LP sits.
struct Layout {
  std::vector<std::vector<int>> node_col;  // per node, per strategy: column, -1 when forbidden
  std::vector<std::vector<int>> edge_col;  // per edge, per table entry: column, -1 when forbidden
  std::vector<std::vector<int>> from_row;  // per edge, per strategy of `from`: its marginal row, -1 when forbidden
  std::vector<std::vector<int>> to_row;    // per edge, per strategy of `to`: its marginal row, -1 when forbidden
  int64_t columns = 0;                     // x and y columns
  int equality_rows = 0;                   // node rows (first, one per node) and marginal rows
};

bool allowed_pair(const Problem& p, const ProblemEdge& e, const std::vector<std::vector<int>>& node_col, std::size_t k) {
  const int cols = p.nodes[e.to].size();
  const int s = static_cast<int>(k / cols), t = static_cast<int>(k % cols);
  return e.costs[k] < kForbidden && node_col[e.from][s] >= 0 && node_col[e.to][t] >= 0;
}

Layout lay_out(const Problem& p) {
  Layout l;
  l.equality_rows = static_cast<int>(p.nodes.size());
  for (const auto& node : p.nodes) {
    auto& cols = l.node_col.emplace_back(node.size(), -1);
    for (int s = 0; s < node.size(); ++s) {
      if (node.costs[s] < kForbidden) cols[s] = static_cast<int>(l.columns++);
    }
  }
  for (const auto& e : p.edges) {
    auto& cols = l.edge_col.emplace_back(e.costs.size(), -1);
    for (std::size_t k = 0; k < e.costs.size(); ++k) {
      if (allowed_pair(p, e, l.node_col, k)) cols[k] = static_cast<int>(l.columns++);
    }
    auto number = [&](const std::vector<int>& node_cols) {
      std::vector<int> rows(node_cols.size(), -1);
      for (std::size_t s = 0; s < node_cols.size(); ++s) {
        if (node_cols[s] >= 0) rows[s] = l.equality_rows++;
      }
      return rows;
    };
    l.from_row.push_back(number(l.node_col[e.from]));
    l.to_row.push_back(number(l.node_col[e.to]));
  }
  return l;
}

// The equality part of the LP as coefficient triplets, with its objective.
struct Triplets {
  std::vector<int> rows, cols;    // coefficient positions
  std::vector<double> values;     // coefficients
  std::vector<double> objective;  // per column: its cost

  void add(int row, int col, double value) {
    rows.push_back(row);
    cols.push_back(col);
    values.push_back(value);
  }
};

Triplets equality_part(const Problem& p, const Layout& l) {
  Triplets t;
  t.objective.assign(l.columns, 0.0);
  for (std::size_t v = 0; v < p.nodes.size(); ++v) {
    for (int s = 0; s < p.nodes[v].size(); ++s) {
      const int col = l.node_col[v][s];
      if (col < 0) continue;
      t.objective[col] = static_cast<double>(p.nodes[v].costs[s]);
      t.add(static_cast<int>(v), col, 1.0);
    }
  }
  for (std::size_t e = 0; e < p.edges.size(); ++e) {
    const ProblemEdge& edge = p.edges[e];
    const int cols = p.nodes[edge.to].size();
    for (int s = 0; s < p.nodes[edge.from].size(); ++s) {
      if (l.from_row[e][s] >= 0) t.add(l.from_row[e][s], l.node_col[edge.from][s], -1.0);
    }
    for (int u = 0; u < cols; ++u) {
      if (l.to_row[e][u] >= 0) t.add(l.to_row[e][u], l.node_col[edge.to][u], -1.0);
    }
    for (std::size_t k = 0; k < edge.costs.size(); ++k) {
      const int col = l.edge_col[e][k];
      if (col < 0) continue;
      t.objective[col] = static_cast<double>(edge.costs[k]);
      t.add(l.from_row[e][k / cols], col, 1.0);
      t.add(l.to_row[e][k % cols], col, 1.0);
    }
  }
  return t;
}

// The memory rows that may bind: co-live sets whose largest usage exceeds the limit.
std::vector<std::vector<int>> candidate_rows(const Problem& p) {
  std::vector<std::vector<int>> rows;
  if (!p.usage_limit) return rows;
  for (auto& row : usage_rows(p)) {
    long double most = 0;
    for (int v : row) {
      int64_t high = 0;
      for (int s = 0; s < p.nodes[v].size(); ++s) {
        if (p.nodes[v].costs[s] < kForbidden) high = std::max(high, p.nodes[v].usages[s]);
      }
      most += high;
    }
    if (most > static_cast<long double>(*p.usage_limit)) rows.push_back(std::move(row));
  }
  return rows;
}

int64_t row_nonzeros(const Layout& l, const std::vector<int>& row) {
  int64_t n = 0;
  for (int v : row) n += std::count_if(l.node_col[v].begin(), l.node_col[v].end(), [](int c) { return c >= 0; });
  return n;
}

}  // namespace

namespace {

// A sum kept with the sum of its terms' magnitudes, for a rounding tolerance.
struct Sum {
  long double value = 0;  // the sum
  long double size = 0;   // the sum of |term|

  void add(long double term) {
    value += term;
    size += std::fabs(term);
  }
};

class ClpRelaxation {
 public:
  ClpRelaxation(const Problem& p, const LpOptions& options)
      : p_(p), options_(options), layout_(lay_out(p)), candidates_(options.rows ? *options.rows : candidate_rows(p)) {}

  LpRelaxation run() {
    const auto start = Clock::now();
    if (!fits()) {
      result_.outcome = "too large";
    } else {
      load();
      solve();
    }
    result_.columns = layout_.columns;
    result_.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return std::move(result_);
  }

 private:
  bool fits() const {
    if (layout_.columns > options_.max_columns) return false;
    int64_t nonzeros = 0;
    for (const auto& row : candidates_) nonzeros += row_nonzeros(layout_, row);
    return nonzeros <= options_.max_nonzeros;
  }

  void load() {
    const Triplets t = equality_part(p_, layout_);
    CoinPackedMatrix matrix(false, t.rows.data(), t.cols.data(), t.values.data(),
                            static_cast<CoinBigIndex>(t.values.size()));
    // The triplets size the matrix by the largest index they hold: trailing
    // rows or columns without an entry would be missing from Clp's model
    // (and from its dual array) without this.
    matrix.setDimensions(layout_.equality_rows, layout_.columns);
    std::vector<double> col_lower(layout_.columns, 0.0), col_upper(layout_.columns, COIN_DBL_MAX);
    std::vector<double> row_bound(layout_.equality_rows, 0.0);
    std::fill(row_bound.begin(), row_bound.begin() + static_cast<long>(p_.nodes.size()), 1.0);
    clp_.setLogLevel(0);
    clp_.loadProblem(matrix, col_lower.data(), col_upper.data(), t.objective.data(), row_bound.data(), row_bound.data());
  }

  // Solves, adds the violated memory rows, and solves again until none is
  // violated; then reads the solution.
  void solve() {
    for (;;) {
      if (result_.rounds >= options_.max_rounds) return finish("round limit");
      if (!run_clp()) return;
      const std::vector<int> rows = violated();
      if (rows.empty()) return finish("optimal");
      add_rows(rows);
    }
  }

  // One dual simplex solve within the deadline; false (and the outcome set) when it did not end optimal.
  bool run_clp() {
    if (options_.deadline) {
      const double left = std::chrono::duration<double>(*options_.deadline - Clock::now()).count();
      if (left <= 0) {
        finish("time limit");
        return false;
      }
      clp_.setMaximumWallSeconds(left);
    }
    ++result_.rounds;
    clp_.dual();
    if (clp_.status() == 0) return true;
    if (clp_.status() == 1) {
      result_.outcome = "infeasible";  // no bound claimed: Z3 decides
    } else {
      finish(clp_.status() == 3 ? "time limit" : "failed");
    }
    return false;
  }

  // Candidate memory rows the current solution violates, not added yet.
  std::vector<int> violated() const {
    const double* x = clp_.primalColumnSolution();
    const long double limit = static_cast<long double>(*p_.usage_limit);
    std::vector<int> rows;
    for (std::size_t r = 0; r < candidates_.size(); ++r) {
      if (added_.size() > 0 && std::binary_search(added_sorted_.begin(), added_sorted_.end(), static_cast<int>(r))) continue;
      long double used = 0;
      for (int v : candidates_[r]) {
        for (int s = 0; s < p_.nodes[v].size(); ++s) {
          const int col = layout_.node_col[v][s];
          if (col >= 0) used += static_cast<long double>(p_.nodes[v].usages[s]) * x[col];
        }
      }
      if (used > limit * (1 + 1e-9L)) rows.push_back(static_cast<int>(r));
    }
    return rows;
  }

  // Adds candidate rows: usages over the limit, scaled so that the limit is 1.
  void add_rows(const std::vector<int>& rows) {
    const double limit = static_cast<double>(*p_.usage_limit);
    std::vector<CoinBigIndex> starts{0};
    std::vector<int> cols;
    std::vector<double> values;
    for (int r : rows) {
      for (int v : candidates_[r]) {
        for (int s = 0; s < p_.nodes[v].size(); ++s) {
          const int col = layout_.node_col[v][s];
          if (col < 0 || p_.nodes[v].usages[s] == 0) continue;
          cols.push_back(col);
          values.push_back(static_cast<double>(p_.nodes[v].usages[s]) / limit);
        }
      }
      starts.push_back(static_cast<CoinBigIndex>(cols.size()));
      added_.push_back(r);
    }
    const std::vector<double> lower(rows.size(), -COIN_DBL_MAX), upper(rows.size(), 1.0);
    clp_.addRows(static_cast<int>(rows.size()), lower.data(), upper.data(), starts.data(), cols.data(), values.data());
    added_sorted_ = added_;
    std::sort(added_sorted_.begin(), added_sorted_.end());
    result_.memory_rows = static_cast<int>(added_.size());
  }

  void finish(const std::string& outcome) {
    result_.outcome = outcome;
    if (clp_.status() == 0 || clp_.status() == 3) read_solution();
  }

  void read_solution();
  std::vector<std::vector<double>> node_reduced(const double* duals, Sum& bound) const;
  std::vector<std::vector<double>> edge_reduced(const double* duals, Sum& bound) const;

  const Problem& p_;
  const LpOptions& options_;
  Layout layout_;
  std::vector<std::vector<int>> candidates_;  // memory rows that may bind (node lists)
  std::vector<int> added_;                    // candidates added, in row order after the equality rows
  std::vector<int> added_sorted_;             // the same, ascending
  mutable std::vector<double> binding_duals_;       // their duals, negated (read_solution)
  mutable std::vector<std::vector<int>> binding_;  // added rows with a nonzero dual (read_solution)
  ClpSimplex clp_;
  LpRelaxation result_;
};

// Reduced costs of the x columns from the row duals (memory duals clamped to
// their sign, <= 0), in long double; adds the node rows' right-hand side and
// each node's least reduced cost to `bound`.
std::vector<std::vector<double>> ClpRelaxation::node_reduced(const double* duals, Sum& bound) const {
  std::vector<std::vector<long double>> d(p_.nodes.size());
  for (std::size_t v = 0; v < p_.nodes.size(); ++v) {
    d[v].assign(p_.nodes[v].size(), 0);
    for (int s = 0; s < p_.nodes[v].size(); ++s) d[v][s] = static_cast<long double>(p_.nodes[v].costs[s]) - duals[v];
    bound.add(duals[v]);
  }
  for (std::size_t e = 0; e < p_.edges.size(); ++e) {
    const ProblemEdge& edge = p_.edges[e];
    for (int s = 0; s < p_.nodes[edge.from].size(); ++s) {
      if (layout_.from_row[e][s] >= 0) d[edge.from][s] += duals[layout_.from_row[e][s]];
    }
    for (int t = 0; t < p_.nodes[edge.to].size(); ++t) {
      if (layout_.to_row[e][t] >= 0) d[edge.to][t] += duals[layout_.to_row[e][t]];
    }
  }
  const long double limit = p_.usage_limit ? static_cast<long double>(*p_.usage_limit) : 1;
  for (std::size_t m = 0; m < added_.size(); ++m) {
    const long double dual = std::min(0.0, duals[layout_.equality_rows + static_cast<int>(m)]);
    if (dual < 0) {
      binding_.push_back(candidates_[added_[m]]);
      binding_duals_.push_back(static_cast<double>(-dual));
    }
    bound.add(dual);
    for (int v : candidates_[added_[m]]) {
      for (int s = 0; s < p_.nodes[v].size(); ++s) {
        d[v][s] -= dual * (static_cast<double>(p_.nodes[v].usages[s]) / static_cast<double>(limit));
      }
    }
  }
  std::vector<std::vector<double>> out(p_.nodes.size());
  for (std::size_t v = 0; v < p_.nodes.size(); ++v) {
    long double least = kInf;
    for (int s = 0; s < p_.nodes[v].size(); ++s) {
      const bool allowed = layout_.node_col[v][s] >= 0;
      out[v].push_back(allowed ? static_cast<double>(d[v][s]) : kInf);
      if (allowed) least = std::min(least, d[v][s]);
    }
    bound.add(least);
  }
  return out;
}

// Reduced costs of the y columns; adds each edge's least one to `bound`.
std::vector<std::vector<double>> ClpRelaxation::edge_reduced(const double* duals, Sum& bound) const {
  std::vector<std::vector<double>> out(p_.edges.size());
  for (std::size_t e = 0; e < p_.edges.size(); ++e) {
    const ProblemEdge& edge = p_.edges[e];
    const int cols = p_.nodes[edge.to].size();
    long double least = kInf;
    out[e].assign(edge.costs.size(), kInf);
    for (std::size_t k = 0; k < edge.costs.size(); ++k) {
      if (layout_.edge_col[e][k] < 0) continue;
      const long double d = static_cast<long double>(edge.costs[k]) - duals[layout_.from_row[e][k / cols]] -
                            duals[layout_.to_row[e][k % cols]];
      out[e][k] = static_cast<double>(d);
      least = std::min(least, d);
    }
    bound.add(least);
  }
  return out;
}

void ClpRelaxation::read_solution() {
  const double* duals = clp_.dualRowSolution();
  const double* x = clp_.primalColumnSolution();
  Sum bound;
  result_.node_reduced = node_reduced(duals, bound);
  result_.edge_reduced = edge_reduced(duals, bound);
  // The marginal rows' duals, for pricing pairs the LP had no column for (lp_pricing.hpp).
  result_.from_duals.assign(p_.edges.size(), {});
  result_.to_duals.assign(p_.edges.size(), {});
  for (std::size_t e = 0; e < p_.edges.size(); ++e) {
    for (int row : layout_.from_row[e]) result_.from_duals[e].push_back(row >= 0 ? duals[row] : 0.0);
    for (int row : layout_.to_row[e]) result_.to_duals[e].push_back(row >= 0 ? duals[row] : 0.0);
  }
  result_.binding_rows = std::move(binding_);
  result_.binding_duals = std::move(binding_duals_);
  result_.values.assign(p_.nodes.size(), {});
  for (std::size_t v = 0; v < p_.nodes.size(); ++v) {
    for (int s = 0; s < p_.nodes[v].size(); ++s) {
      const int col = layout_.node_col[v][s];
      result_.values[v].push_back(col >= 0 ? x[col] : 0.0);
    }
  }
  // Rounding in the duals' arithmetic: a margin far above long double's
  // error on these sums; costs are integers, so the bound rounds up.
  const long double margin = 1e-12L * bound.size + 1e-6L;
  const long double exact = bound.value - margin;
  result_.bound_exact = static_cast<double>(exact);
  result_.bound = !std::isfinite(static_cast<double>(exact)) || exact <= 0 ? 0 : static_cast<int64_t>(std::ceil(exact));
}

}  // namespace

LpRelaxation solve_lp_relaxation(const Problem& problem, const LpOptions& options) {
  return ClpRelaxation(problem, options).run();
}

}  // namespace shardsynth::synth
