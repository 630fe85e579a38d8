#pragma once
// The Z3 encodings of a plain Problem. Both give the total cost as one
// integer term and exclude forbidden strategies and pairs by constraints:
//
//  - if_chains: one Int per node whose domain is its strategy indices; each
//    cost table is an If-chain over it;
//  - one_hot: one Bool per strategy with exactly one true per node; node
//    costs are sums of If(b, cost, 0) and edge tables nest them;
//  - pseudo_boolean: the one-hot Bools plus one Bool per entry of nonzero
//    cost of each edge's table over its row and column classes
//    (edge_classes.hpp; a class of several strategies gets a Bool of its
//    own), true exactly when both ends pick it; the cost is a constant (the
//    nodes' least costs) plus the weighted sum of these literals, and a
//    bound on it is one pseudo-Boolean row, so Z3's solver propagates it
//    literal by literal.
//
// With a usage limit, memory goes in as pseudo-Boolean rows (usage of each
// strategy literal, at most the limit), one per distinct set of nodes live
// together, keeping only sets not contained in another.
#include <vector>

#include <z3++.h>

#include "synth/solver/solver_types.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

class Z3Encoding {
 public:
  Z3Encoding(z3::context& context, const Problem& problem, EncodingKind kind = EncodingKind::if_chains);

  // The total cost as one Int term.
  z3::expr cost_term() const;
  // "cost < bound" and "cost >= bound" as constraints.
  z3::expr below(int64_t bound) const;
  z3::expr at_least(int64_t bound) const;
  const z3::expr_vector& constraints() const { return constraints_; }  // domains, forbidden choices, usage rows
  // The Boolean "node picks strategy s".
  z3::expr picks(int node, int strategy) const;
  // The assignment a model picks (completing unconstrained choices with 0).
  Assignment decode(const z3::model& model) const;
  // Z3's own value of the cost term in a model.
  int64_t cost_value(const z3::model& model) const;
  int usage_rows() const { return usage_rows_; }  // memory rows emitted

 private:
  z3::expr select(int node, const std::vector<int64_t>& values, const std::vector<bool>& skip) const;
  void encode_arithmetic(const Problem& problem, std::vector<std::vector<bool>>& banned);
  void encode_pseudo_boolean(const Problem& problem, std::vector<std::vector<bool>>& banned);
  void encode_usage(const Problem& problem, const std::vector<std::vector<bool>>& banned);

  z3::context& ctx_;
  EncodingKind kind_;
  std::vector<z3::expr> ints_;                // if_chains: one Int per node
  std::vector<std::vector<z3::expr>> bools_;  // one_hot: one Bool per node and strategy
  z3::expr cost_;                    // the cost as an Int term (not built for pseudo_boolean)
  z3::expr_vector cost_literals_;    // pseudo_boolean: literals whose weights sum to the cost
  std::vector<int64_t> cost_weights_;  // pseudo_boolean: their weights
  int64_t constant_ = 0;             // pseudo_boolean: cost paid whatever is picked (the nodes' least allowed costs)
  z3::expr_vector constraints_;
  int usage_rows_ = 0;
};

}  // namespace shardsynth::synth
