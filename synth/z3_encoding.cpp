#include "synth/z3_encoding.hpp"

#include <algorithm>

namespace shardsynth::synth {
namespace {

// If-chain over `values` selected by `var`; entries where `skip` holds are
// excluded by constraints elsewhere, so they take any value (the last kept).
template <class Skip>
z3::expr select(z3::context& ctx, const z3::expr& var, const std::vector<int64_t>& values, Skip skip) {
  int last = -1;
  for (int i = static_cast<int>(values.size()) - 1; i >= 0 && last < 0; --i) {
    if (!skip(i)) last = i;
  }
  if (last < 0) return ctx.int_val(0);
  bool constant = true;
  for (int i = 0; i < static_cast<int>(values.size()); ++i) {
    if (!skip(i) && values[i] != values[last]) constant = false;
  }
  z3::expr chain = ctx.int_val(values[last]);
  if (constant) return chain;
  for (int i = last - 1; i >= 0; --i) {
    if (!skip(i)) chain = z3::ite(var == i, ctx.int_val(values[i]), chain);
  }
  return chain;
}

}  // namespace

Z3Encoding::Z3Encoding(z3::context& ctx, const Problem& problem) : cost_(ctx.int_val(0)), constraints_(ctx) {
  z3::expr_vector terms(ctx);
  for (std::size_t i = 0; i < problem.nodes.size(); ++i) {
    const auto& node = problem.nodes[i];
    vars_.push_back(ctx.int_const((node.label + "#" + std::to_string(i)).c_str()));
    const z3::expr& x = vars_.back();
    constraints_.push_back(x >= 0 && x < node.size());
    for (int s = 0; s < node.size(); ++s) {
      if (node.costs[s] >= kForbidden) constraints_.push_back(x != s);
    }
    terms.push_back(select(ctx, x, node.costs, [&](int s) { return node.costs[s] >= kForbidden; }));
  }
  for (const auto& edge : problem.edges) {
    const int rows = problem.nodes[edge.from].size();
    const int cols = problem.nodes[edge.to].size();
    const z3::expr& x = vars_[edge.from];
    const z3::expr& y = vars_[edge.to];
    std::vector<z3::expr> row_terms;
    std::vector<bool> row_forbidden(rows, false);
    for (int r = 0; r < rows; ++r) {
      std::vector<int64_t> row(edge.costs.begin() + static_cast<std::ptrdiff_t>(r) * cols,
                               edge.costs.begin() + static_cast<std::ptrdiff_t>(r + 1) * cols);
      auto forbidden = [&](int c) { return row[c] >= kForbidden; };
      int kept = 0;
      for (int c = 0; c < cols; ++c) {
        if (forbidden(c)) {
          constraints_.push_back(!(x == r && y == c));
        } else {
          ++kept;
        }
      }
      if (kept == 0) {
        row_forbidden[r] = true;
        constraints_.push_back(x != r);
      }
      row_terms.push_back(select(ctx, y, row, forbidden));
    }
    int last = rows - 1;
    while (last > 0 && row_forbidden[last]) --last;
    z3::expr chain = row_terms[last];
    for (int r = last - 1; r >= 0; --r) {
      if (!row_forbidden[r]) chain = z3::ite(x == r, row_terms[r], chain);
    }
    terms.push_back(chain);
  }
  cost_ = terms.empty() ? ctx.int_val(0) : z3::sum(terms);
  if (problem.usage_limit) {
    for (int64_t t : usage_check_points(problem)) {
      z3::expr_vector used(ctx);
      for (std::size_t i = 0; i < problem.nodes.size(); ++i) {
        const auto& node = problem.nodes[i];
        if (node.live_from <= t && t < node.live_to && !node.usages.empty()) {
          used.push_back(select(ctx, vars_[i], node.usages, [&](int s) { return node.costs[s] >= kForbidden; }));
        }
      }
      if (!used.empty()) constraints_.push_back(z3::sum(used) <= ctx.int_val(*problem.usage_limit));
    }
  }
}

Assignment Z3Encoding::decode(const z3::model& model) const {
  Assignment a;
  for (const auto& v : vars_) a.push_back(static_cast<int>(model.eval(v, true).get_numeral_int64()));
  return a;
}

int64_t Z3Encoding::cost_value(const z3::model& model) const { return model.eval(cost_, true).get_numeral_int64(); }

}  // namespace shardsynth::synth
