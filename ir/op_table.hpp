#pragma once
// The op table: every op kind's sharding rule as data, in one place, keyed by
// kind. It is the one declaration of the op kinds: the solver and the cost
// model never look at kind names; the runtime's kernel tables and the
// exporter's mapping are keyed by them and are checked against this table
// (tests/runtime/op_registry_test.cpp, tests/python/op_registry_check.py).
// A new op: an entry here, its golden line in tests/golden/rule_table.txt,
// CPU forward and backward kernels (or a declaration in
// runtime/op_coverage.hpp), a GPU kernel or a declared fallback
// (runtime/cuda/cpu_fallbacks.hpp), and the exporter's mapping
// (docs/ARCHITECTURE.md, "Where to change what").
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.hpp"
#include "ir/sharding_rule.hpp"

namespace shardsynth::ir {

// Graph-boundary kinds: they carry no sharding rule.
inline constexpr std::string_view kPlaceholder = "placeholder";
inline constexpr std::string_view kOutput = "output";

struct ParamInfo {
  std::string name;              // attribute name ("weight", "bias")
  bool shown_in_spec = false;    // whether the iteration table's InSpec column lists it
  std::vector<int> display_perm; // dims as the op's math sees them, e.g. {1, 0}: Linear's [out, in] weight shown [in, out]; empty = as stored
  bool optional = false;         // a node may omit it (a Linear without bias); its equation operand is then dropped
};

// An equation instantiated for one node: text plus extents of factors that
// occur only inside grouped dims.
struct Equation {
  std::string text;                // e.g. "...k,nk,n->...n"
  std::map<char, int64_t> sizes;   // extents not readable off the shapes
  std::map<char, FactorKind> kinds;  // kinds of letters the derivation chose, on top of the table entry's
};

// Builds a node's equation from its shapes and attributes, for kinds whose
// equation depends on them (view, permute, transpose, conv1d's groups, split).
using EquationFn = std::function<Equation(const Node& node, const std::vector<std::vector<int64_t>>& input_shapes)>;

struct OpKindInfo {
  std::string kind;                      // table key
  std::string fx_op;                     // torch.fx opcode for the graph table: call_module, call_function, call_method
  std::string fx_target;                 // default target text for the graph table
  std::string equation;                  // operands: tensor inputs then params; empty when `derive` builds it
  std::map<char, FactorKind> kinds;      // factor kinds by letter; unlisted letters are pass_through
  std::vector<ParamInfo> params;         // parameters, in operand order after the tensor inputs
  EquationFn derive;                     // set for shape-dependent equations
  double flops_per_point = 0;            // forward flops per point of the iteration space (2 for a multiply-add)
  std::string not_iterated;              // factor letters left out of the iteration space (an embedding's vocab)
  bool linear = false;                   // distributes over a pending partial sum: f(a + b) = f(a) + f(b) (dropout, scale)
  bool any_params = false;               // params are not listed: a node may carry any, each an operand after the inputs (opaque)
  std::string normalized;                // factor letters the op normalizes over (a softmax's sum of exponentials): while
                                         // one is sharded, the op exchanges each row's max and sum of exponentials
                                         // among the shards (costs/row_exchange.hpp)
};

// The whole table, ordered by kind.
const std::map<std::string, OpKindInfo, std::less<>>& op_table();
// One entry; throws InputError("unknown op kind 'foo' at node 'bar'") when absent.
const OpKindInfo& op_info(std::string_view kind, std::string_view node_name = {});
// The table's description of one of a node's params.
const ParamInfo& param_info(const Node& node, const std::string& param);
// Whether a kind is a graph boundary (placeholder, output).
bool is_boundary(std::string_view kind);
// The fx opcode and target text the graph table prints for a node.
std::string fx_op_of(const Node& node);
std::string fx_target_of(const Node& node);
// The node's sharding rule: operands are its tensor inputs, then its params.
// Throws InputError naming the node when the shapes do not fit the equation.
ShardingRule rule_for(const Graph& graph, Vertex v);
// Forward flops of one node: flops_per_point x the product of its rule's
// factor extents, less the factors in not_iterated.
double forward_flops(const Graph& graph, Vertex v, const ShardingRule& rule);
// One line per kind: kind, equation and factor kinds, params (optional ones
// marked '?'), flops per point, not_iterated and normalized letters.
// Golden-tested.
std::string rule_table_text();

}  // namespace shardsynth::ir
