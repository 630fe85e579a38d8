#include "synth/solver/z3_encoding.hpp"

#include <algorithm>
#include <climits>
#include <optional>

#include "synth/solver/edge_classes.hpp"

namespace shardsynth::synth {
namespace {

bool forbidden(int64_t c) { return c >= kForbidden; }

// A Bool of its own, named by Z3 from `prefix` and a counter of the context.
z3::expr fresh_bool(z3::context& ctx, const char* prefix) {
  return z3::expr(ctx, Z3_mk_fresh_const(ctx, prefix, ctx.bool_sort()));
}

// The literal "the node picks a strategy of class k" of one side of an edge:
// the strategy's own literal for a class of one, otherwise a fresh Bool
// equal to the disjunction of its members' literals, made on first use.
class ClassLiterals {
 public:
  ClassLiterals(z3::context& ctx, const std::vector<z3::expr>& picks, const std::vector<std::vector<int>>& members,
                z3::expr_vector& constraints)
      : ctx_(ctx), picks_(picks), members_(members), constraints_(constraints), made_(members.size(), std::nullopt) {}

  z3::expr literal(int k) {
    if (members_[k].size() == 1) return picks_[members_[k].front()];
    if (!made_[k]) {
      const z3::expr g = fresh_bool(ctx_, "c");
      z3::expr_vector any(ctx_);
      for (int s : members_[k]) {
        constraints_.push_back(!picks_[s] || g);
        any.push_back(picks_[s]);
      }
      constraints_.push_back(!g || z3::mk_or(any));
      made_[k] = g;
    }
    return *made_[k];
  }

 private:
  z3::context& ctx_;
  const std::vector<z3::expr>& picks_;
  const std::vector<std::vector<int>>& members_;
  z3::expr_vector& constraints_;
  std::vector<std::optional<z3::expr>> made_;
};

}  // namespace

z3::expr Z3Encoding::picks(int node, int strategy) const {
  if (kind_ != EncodingKind::if_chains) return bools_[node][strategy];
  return ints_[node] == strategy;
}

Z3Encoding::Z3Encoding(z3::context& ctx, const Problem& problem, EncodingKind kind)
    : ctx_(ctx), kind_(kind), cost_(ctx.int_val(0)), cost_literals_(ctx), constraints_(ctx) {
  const int n = static_cast<int>(problem.nodes.size());
  // Variables and domains.
  for (int i = 0; i < n; ++i) {
    const auto& node = problem.nodes[i];
    const std::string name = node.label + "#" + std::to_string(i);
    if (kind == EncodingKind::if_chains) {
      ints_.push_back(ctx.int_const(name.c_str()));
      constraints_.push_back(ints_.back() >= 0 && ints_.back() < node.size());
    } else {
      std::vector<z3::expr> bs;
      z3::expr_vector all(ctx);
      for (int s = 0; s < node.size(); ++s) {
        bs.push_back(ctx.bool_const((name + "=" + std::to_string(s)).c_str()));
        all.push_back(bs.back());
      }
      constraints_.push_back(z3::atleast(all, 1));
      constraints_.push_back(z3::atmost(all, 1));
      bools_.push_back(std::move(bs));
    }
    for (int s = 0; s < node.size(); ++s) {
      if (forbidden(node.costs[s])) constraints_.push_back(!picks(i, s));
    }
  }
  std::vector<std::vector<bool>> banned(n);
  if (kind == EncodingKind::pseudo_boolean) {
    encode_pseudo_boolean(problem, banned);
  } else {
    encode_arithmetic(problem, banned);
  }
  encode_usage(problem, banned);
}

void Z3Encoding::encode_pseudo_boolean(const Problem& problem, std::vector<std::vector<bool>>& banned) {
  z3::context& ctx = ctx_;
  const int n = static_cast<int>(problem.nodes.size());
  // Each node's least allowed cost is paid whatever it picks: it goes into
  // the constant, so the weights and the bound are smaller and fit Z3's
  // native pseudo-Boolean rows more often.
  for (int i = 0; i < n; ++i) {
    const auto& node = problem.nodes[i];
    banned[i] = banned_strategies(node);
    int64_t least = 0;
    bool any = false;
    for (int s = 0; s < node.size(); ++s) {
      if (!banned[i][s]) least = any ? std::min(least, node.costs[s]) : node.costs[s], any = true;
    }
    constant_ += least;
    for (int s = 0; s < node.size(); ++s) {
      if (!banned[i][s] && node.costs[s] > least) {
        cost_literals_.push_back(bools_[i][s]);
        cost_weights_.push_back(node.costs[s] - least);
      }
    }
  }
  for (const auto& edge : problem.edges) {
    const EdgeClasses classes = edge_classes(problem, edge, banned[edge.from], banned[edge.to]);
    ClassLiterals rows(ctx, bools_[edge.from], classes.row_members, constraints_);
    ClassLiterals cols(ctx, bools_[edge.to], classes.col_members, constraints_);
    const std::size_t width = classes.col_members.size();
    for (std::size_t k = 0; k < classes.costs.size(); ++k) {
      const int64_t cost = classes.costs[k];
      if (cost == 0) continue;
      const z3::expr x = rows.literal(static_cast<int>(k / width));
      const z3::expr y = cols.literal(static_cast<int>(k % width));
      if (forbidden(cost)) {
        constraints_.push_back(!x || !y);
        continue;
      }
      const z3::expr both = fresh_bool(ctx, "e");
      constraints_.push_back(!x || !y || both);
      constraints_.push_back(!both || x);
      constraints_.push_back(!both || y);
      cost_literals_.push_back(both);
      cost_weights_.push_back(cost);
    }
  }
}

// value(node, s) selected by the node's choice, over the allowed strategies.
z3::expr Z3Encoding::select(int node, const std::vector<int64_t>& values, const std::vector<bool>& skip) const {
  int last = -1;
  for (int s = static_cast<int>(values.size()) - 1; s >= 0 && last < 0; --s) {
    if (!skip[s]) last = s;
  }
  if (last < 0) return ctx_.int_val(0);
  bool constant = true;
  for (std::size_t s = 0; s < values.size(); ++s) constant = constant && (skip[s] || values[s] == values[last]);
  if (constant) return ctx_.int_val(values[last]);
  if (kind_ == EncodingKind::one_hot) {
    // Exactly one literal holds: a sum of If(b, v, 0) over the nonzero values.
    z3::expr_vector terms(ctx_);
    for (std::size_t s = 0; s < values.size(); ++s) {
      if (!skip[s] && values[s] != 0) terms.push_back(z3::ite(bools_[node][s], ctx_.int_val(values[s]), ctx_.int_val(0)));
    }
    return terms.empty() ? ctx_.int_val(0) : z3::sum(terms);
  }
  z3::expr chain = ctx_.int_val(values[last]);
  for (int s = last - 1; s >= 0; --s) {
    if (!skip[s]) chain = z3::ite(ints_[node] == s, ctx_.int_val(values[s]), chain);
  }
  return chain;
}

void Z3Encoding::encode_arithmetic(const Problem& problem, std::vector<std::vector<bool>>& banned) {
  z3::context& ctx = ctx_;
  const int n = static_cast<int>(problem.nodes.size());
  const EncodingKind kind = kind_;
  z3::expr_vector terms(ctx);
  for (int i = 0; i < n; ++i) {
    const auto& node = problem.nodes[i];
    for (int s = 0; s < node.size(); ++s) banned[i].push_back(forbidden(node.costs[s]));
    terms.push_back(select(i, node.costs, banned[i]));
  }
  for (const auto& edge : problem.edges) {
    const int rows = problem.nodes[edge.from].size();
    const int cols = problem.nodes[edge.to].size();
    std::vector<z3::expr> row_terms;
    std::vector<bool> row_banned = banned[edge.from];
    for (int r = 0; r < rows; ++r) {
      std::vector<int64_t> row(edge.costs.begin() + static_cast<std::ptrdiff_t>(r) * cols,
                               edge.costs.begin() + static_cast<std::ptrdiff_t>(r + 1) * cols);
      std::vector<bool> skip = banned[edge.to];
      int kept = 0;
      for (int c = 0; c < cols; ++c) {
        if (skip[c]) continue;
        if (forbidden(row[c])) {
          if (!row_banned[r]) constraints_.push_back(!(picks(edge.from, r) && picks(edge.to, c)));
          skip[c] = true;
        } else {
          ++kept;
        }
      }
      if (kept == 0 && !row_banned[r]) {
        row_banned[r] = true;
        constraints_.push_back(!picks(edge.from, r));
      }
      row_terms.push_back(select(edge.to, row, skip));
    }
    if (kind == EncodingKind::one_hot) {
      z3::expr_vector parts(ctx);
      for (int r = 0; r < rows; ++r) {
        if (!row_banned[r]) parts.push_back(z3::ite(bools_[edge.from][r], row_terms[r], ctx.int_val(0)));
      }
      if (!parts.empty()) terms.push_back(z3::sum(parts));
      continue;
    }
    int last = rows - 1;
    while (last > 0 && row_banned[last]) --last;
    z3::expr chain = row_terms[last];
    for (int r = last - 1; r >= 0; --r) {
      if (!row_banned[r]) chain = z3::ite(ints_[edge.from] == r, row_terms[r], chain);
    }
    terms.push_back(chain);
  }
  cost_ = terms.empty() ? ctx.int_val(0) : z3::sum(terms);
}

void Z3Encoding::encode_usage(const Problem& problem, const std::vector<std::vector<bool>>& banned) {
  z3::context& ctx = ctx_;
  if (!problem.usage_limit) return;
  const int64_t limit = *problem.usage_limit;
  for (const auto& row : synth::usage_rows(problem)) {
    z3::expr_vector lits(ctx);
    std::vector<int64_t> coeffs;
    for (int i : row) {
      const auto& node = problem.nodes[i];
      for (int s = 0; s < node.size(); ++s) {
        if (!banned[i][s] && node.usages[s] != 0) {
          lits.push_back(picks(i, s));
          coeffs.push_back(node.usages[s]);
        }
      }
    }
    if (lits.empty()) {
      if (limit < 0) constraints_.push_back(ctx.bool_val(false));
      continue;
    }
    ++usage_rows_;
    const bool fits_int = limit <= INT_MAX && limit >= 0 &&
                          std::all_of(coeffs.begin(), coeffs.end(), [](int64_t c) { return c <= INT_MAX && c >= INT_MIN; });
    if (fits_int) {
      std::vector<int> small(coeffs.begin(), coeffs.end());
      constraints_.push_back(z3::pble(lits, small.data(), static_cast<int>(limit)));
    } else {
      z3::expr_vector used(ctx);
      for (unsigned k = 0; k < lits.size(); ++k) used.push_back(z3::ite(lits[k], ctx.int_val(coeffs[k]), ctx.int_val(0)));
      constraints_.push_back(z3::sum(used) <= ctx.int_val(limit));
    }
  }
}

Assignment Z3Encoding::decode(const z3::model& model) const {
  Assignment a;
  if (kind_ == EncodingKind::if_chains) {
    for (const auto& v : ints_) a.push_back(static_cast<int>(model.eval(v, true).get_numeral_int64()));
    return a;
  }
  for (const auto& bs : bools_) {
    int pick = 0;
    for (std::size_t s = 0; s < bs.size(); ++s) {
      if (model.eval(bs[s], true).is_true()) pick = static_cast<int>(s);
    }
    a.push_back(pick);
  }
  return a;
}

namespace {

// sum(weights[k] * literals[k]) compared with `bound` as one pseudo-Boolean
// row; weights above the bound are capped (a literal that heavy decides the
// comparison alone), and an arithmetic sum stands in when even that does not
// fit Z3's int coefficients.
z3::expr weighted_row(z3::context& ctx, const z3::expr_vector& literals, const std::vector<int64_t>& weights, int64_t bound,
                      bool at_most) {
  if (bound <= 0 && at_most) {
    z3::expr_vector none(ctx);
    for (const auto& l : literals) none.push_back(!l);
    return none.empty() ? ctx.bool_val(bound >= 0) : (bound == 0 ? z3::mk_and(none) : ctx.bool_val(false));
  }
  if (bound <= 0) return ctx.bool_val(true);
  if (literals.empty()) return ctx.bool_val(at_most);
  const int64_t cap = at_most ? bound + 1 : bound;
  if (cap <= INT_MAX) {
    std::vector<int> small;
    for (int64_t w : weights) small.push_back(static_cast<int>(std::min(w, cap)));
    return at_most ? z3::pble(literals, small.data(), static_cast<int>(bound))
                   : z3::pbge(literals, small.data(), static_cast<int>(bound));
  }
  z3::expr_vector terms(ctx);
  for (unsigned k = 0; k < literals.size(); ++k) terms.push_back(z3::ite(literals[k], ctx.int_val(weights[k]), ctx.int_val(0)));
  return at_most ? z3::sum(terms) <= ctx.int_val(bound) : z3::sum(terms) >= ctx.int_val(bound);
}

}  // namespace

z3::expr Z3Encoding::cost_term() const {
  if (kind_ != EncodingKind::pseudo_boolean) return cost_;
  z3::expr_vector terms(ctx_);
  terms.push_back(ctx_.int_val(constant_));
  for (unsigned k = 0; k < cost_literals_.size(); ++k) {
    terms.push_back(z3::ite(cost_literals_[k], ctx_.int_val(cost_weights_[k]), ctx_.int_val(0)));
  }
  return z3::sum(terms);
}

z3::expr Z3Encoding::below(int64_t bound) const {
  if (kind_ == EncodingKind::pseudo_boolean) return weighted_row(ctx_, cost_literals_, cost_weights_, bound - 1 - constant_, true);
  return cost_ < ctx_.int_val(bound);
}

z3::expr Z3Encoding::at_least(int64_t bound) const {
  if (kind_ == EncodingKind::pseudo_boolean) return weighted_row(ctx_, cost_literals_, cost_weights_, bound - constant_, false);
  return cost_ >= ctx_.int_val(bound);
}

int64_t Z3Encoding::cost_value(const z3::model& model) const {
  if (kind_ != EncodingKind::pseudo_boolean) return model.eval(cost_, true).get_numeral_int64();
  int64_t total = constant_;
  for (unsigned k = 0; k < cost_literals_.size(); ++k) {
    if (model.eval(cost_literals_[k], true).is_true()) total += cost_weights_[k];
  }
  return total;
}

}  // namespace shardsynth::synth
