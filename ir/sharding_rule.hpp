#pragma once
// Sharding rules: how the dims of an op's operands and result are tied
// together, as factors of an einsum-like equation (OpenXLA Shardy's model; the
// simpler ancestor is DTensor's einop_rule).
//
// Each tensor dim holds one or more factors, major first ("(qhd)" = a dim of
// extent q*h*d). A factor shared by several tensors must be sharded the same
// way on all of them. Factor kinds:
//   pass_through      - may be sharded; the result keeps the sharding;
//   reduction         - contracted away; sharding it leaves the result a
//                       partial sum over those mesh axes;
//   needs_replication - must stay replicated (softmax's and layernorm's
//                       normalized dim).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace shardsynth::ir {

enum class FactorKind { pass_through, reduction, needs_replication };

struct Factor {
  std::string name;  // as written in the equation; ellipsis factors are e0, e1, ...
  int64_t size = 1;  // extent of the factor
  FactorKind kind = FactorKind::pass_through;  // how sharding it behaves
};

using DimFactors = std::vector<int>;  // factor ids held by one tensor dim, major first

struct ShardingRule {
  std::vector<Factor> factors;                  // indexed by factor id
  std::vector<std::vector<DimFactors>> operands;  // operand -> dim -> factor ids
  std::vector<DimFactors> result;               // result dim -> factor ids
};

// Builds a rule from an equation such as "...k,nk,n->...n" and the operands'
// and result's shapes. Grammar: operands separated by ',', then "->" and one
// result; each dim is a letter, or "(abc)" for a dim holding several factors;
// "..." stands for the leading dims not written out, aligned from the right
// across tensors. `kinds` gives factor kinds by letter (pass_through when not
// listed). `sizes` gives extents of factors that only occur inside grouped
// dims and so cannot be read off a shape. Throws InputError on a malformed
// equation, a rank mismatch, or extents that disagree.
ShardingRule make_rule(std::string_view equation, const std::map<char, FactorKind>& kinds,
                       const std::vector<std::vector<int64_t>>& operand_shapes, const std::vector<int64_t>& result_shape,
                       const std::map<char, int64_t>& sizes = {});

// Shardy-style text: "([e0, e1, k], [n, k], [n])->([e0, e1, n]) {e0=8, ...} reduction={k}".
std::string to_string(const ShardingRule& rule);

std::string_view factor_kind_name(FactorKind kind);

}  // namespace shardsynth::ir
