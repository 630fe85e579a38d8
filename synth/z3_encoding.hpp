#pragma once
// The Z3 encoding of a plain Problem: one integer variable per node whose
// domain is its strategy indices, constraints excluding forbidden strategies
// and pairs, a usage bound per time step when the problem has a usage limit,
// and the total cost as one integer term built from If-chains over the cost
// tables.
#include <vector>

#include <z3++.h>

#include "synth/problem.hpp"

namespace shardsynth::synth {

class Z3Encoding {
 public:
  Z3Encoding(z3::context& context, const Problem& problem);

  const std::vector<z3::expr>& vars() const { return vars_; }  // one Int per node, named by its label
  const z3::expr& cost() const { return cost_; }               // total cost term
  const z3::expr_vector& constraints() const { return constraints_; }  // domains and forbidden choices
  // The assignment a model picks (completing unconstrained variables with 0).
  Assignment decode(const z3::model& model) const;
  // Z3's own value of the cost term in a model.
  int64_t cost_value(const z3::model& model) const;

 private:
  std::vector<z3::expr> vars_;
  z3::expr cost_;
  z3::expr_vector constraints_;
};

}  // namespace shardsynth::synth
