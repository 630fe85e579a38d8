#include "ir/op_table.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "ir/error.hpp"

namespace shardsynth::ir {
namespace {

constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
constexpr std::size_t kNumLetters = sizeof(kLetters) - 1;

char letter(std::size_t i) {
  if (i >= kNumLetters) throw InputError("tensor rank too large for a sharding equation");
  return kLetters[i];
}

std::string letters(std::size_t count, std::size_t first = 0) {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += letter(first + i);
  return text;
}

const Node& expect_attr(const Node& node, const std::string& name, std::size_t count) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end() || (count > 0 && it->second.size() != count)) {
    throw InputError("node '" + node.name + "' (" + node.kind + ") needs attribute '" + name + "'" +
                     (count > 0 ? " with " + std::to_string(count) + " values" : ""));
  }
  return node;
}

std::vector<int> normalized_dims(const Node& node, const std::vector<int64_t>& raw, std::size_t rank) {
  std::vector<int> dims;
  for (int64_t d : raw) {
    int64_t n = d < 0 ? d + static_cast<int64_t>(rank) : d;
    if (n < 0 || n >= static_cast<int64_t>(rank)) {
      throw InputError("node '" + node.name + "': dim " + std::to_string(d) + " is out of range for rank " + std::to_string(rank));
    }
    dims.push_back(static_cast<int>(n));
  }
  return dims;
}

Equation permute_equation(const Node& node, const std::vector<std::vector<int64_t>>& inputs) {
  const std::size_t rank = inputs.at(0).size();
  expect_attr(node, "dims", rank);
  std::vector<int> perm = normalized_dims(node, node.attrs.at("dims"), rank);
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < rank; ++i) {
    if (sorted[i] != static_cast<int>(i)) throw InputError("node '" + node.name + "': dims is not a permutation");
  }
  std::string out;
  for (int d : perm) out += letter(d);
  return {letters(rank) + "->" + out, {}};
}

Equation transpose_equation(const Node& node, const std::vector<std::vector<int64_t>>& inputs) {
  const std::size_t rank = inputs.at(0).size();
  expect_attr(node, "dims", 2);
  std::vector<int> pair = normalized_dims(node, node.attrs.at("dims"), rank);
  std::string out = letters(rank);
  std::swap(out[pair[0]], out[pair[1]]);
  return {letters(rank) + "->" + out, {}};
}

// Pairs up runs of input and output dims with equal products. A run that maps
// one dim to several becomes a grouped dim "(abc)"; a run with several dims
// on both sides has no factorization and its factors must stay replicated.
Equation view_equation(const Node& node, const std::vector<std::vector<int64_t>>& inputs) {
  const auto& in = inputs.at(0);
  const auto& out = node.type.shape;
  if (num_elements(in) != num_elements(out)) {
    throw InputError("node '" + node.name + "' views " + shape_string(in) + " as " + shape_string(out) +
                     ": element counts differ");
  }
  std::string lhs, rhs;
  std::map<char, int64_t> sizes;
  std::map<char, FactorKind> kinds;
  std::size_t next = 0, i = 0, j = 0;
  auto group = [](const std::string& s) { return s.size() == 1 ? s : "(" + s + ")"; };
  while (i < in.size() || j < out.size()) {
    if (i == in.size() || j == out.size()) {  // trailing extent-1 dims
      char c = letter(next++);
      sizes[c] = 1;
      (i == in.size() ? rhs : lhs) += c;
      (i == in.size() ? j : i)++;
      continue;
    }
    std::size_t i0 = i, j0 = j;
    int64_t pa = in[i++], pb = out[j++];
    while (pa != pb) {
      if (pa < pb && i < in.size()) {
        pa *= in[i++];
      } else if (pb < pa && j < out.size()) {
        pb *= out[j++];
      } else {
        break;
      }
    }
    const std::size_t n_in = i - i0, n_out = j - j0;
    if (n_in == 1 || n_out == 1) {
      // The single dim is grouped; the other side's dims are its factors.
      const auto& many = n_in == 1 ? out : in;
      std::size_t start = n_in == 1 ? j0 : i0, count = n_in == 1 ? n_out : n_in;
      std::string factors = letters(count, next);
      for (std::size_t k = 0; k < count; ++k) sizes[factors[k]] = many[start + k];
      next += count;
      lhs += n_in == 1 ? group(factors) : factors;
      rhs += n_out == 1 ? group(factors) : factors;
    } else {
      for (std::size_t k = 0; k < n_in + n_out; ++k) {
        const char c = letter(next++);
        kinds[c] = FactorKind::needs_replication;
        (k < n_in ? lhs : rhs) += c;
      }
    }
  }
  return {lhs + "->" + rhs, sizes, kinds};
}

// Hugging Face Conv1D (weight stored [in, out]). With groups > 1 the output
// features are `groups` equal blocks (c_attn's fused q | k | v), so sharding
// n within each block is a blocked spec, S(3), and not a contiguous one.
Equation conv1d_equation(const Node& node, const std::vector<std::vector<int64_t>>&) {
  int64_t groups = 1;
  if (node.attrs.count("groups")) {
    expect_attr(node, "groups", 1);
    groups = node.attrs.at("groups")[0];
    if (groups < 1) throw InputError("node '" + node.name + "': groups must be positive, got " + std::to_string(groups));
  }
  if (groups == 1) return {"...k,kn,n->...n", {}};
  return {"...k,k(gn),(gn)->...(gn)", {{'g', groups}}};
}

// One of `sections` equal parts of the last dim. Every part has the same
// rule, so "index" only has to be in range; q picks the part and stays
// replicated, which makes a shard of n blocked (S(sections)) on the input.
Equation split_equation(const Node& node, const std::vector<std::vector<int64_t>>& inputs) {
  if (inputs.size() != 1 || inputs[0].empty()) {
    throw InputError("node '" + node.name + "' (split) needs one tensor input of rank at least 1");
  }
  const auto& in = inputs[0];
  const std::size_t rank = in.size();
  for (const char* name : {"dim", "sections", "index"}) expect_attr(node, name, 1);
  const int dim = normalized_dims(node, node.attrs.at("dim"), rank)[0];
  if (dim != static_cast<int>(rank) - 1) {
    throw InputError("node '" + node.name + "': split dim " + std::to_string(node.attrs.at("dim")[0]) +
                     " is not the last dim");
  }
  const int64_t sections = node.attrs.at("sections")[0];
  if (sections < 1 || in[dim] % sections != 0) {
    throw InputError("node '" + node.name + "': " + std::to_string(sections) + " sections do not divide dim extent " +
                     std::to_string(in[dim]));
  }
  const int64_t index = node.attrs.at("index")[0];
  if (index < 0 || index >= sections) {
    throw InputError("node '" + node.name + "': index " + std::to_string(index) + " is out of range for " +
                     std::to_string(sections) + " sections");
  }
  return {"...(qn)->...n", {{'q', sections}}};
}

// torch.nn.functional.cross_entropy of logits [..., v] against integer
// labels [...], summed over every position and divided by the real attr
// "divisor" (the mean: the label count): a scalar. Every factor is a
// reduction, so a shard of positions or of the vocabulary yields a partial
// sum of the loss; the vocabulary is also normalized over (the table's
// `normalized`), Megatron's vocabulary-parallel cross-entropy.
Equation cross_entropy_equation(const Node& node, const std::vector<std::vector<int64_t>>& inputs) {
  if (inputs.size() != 2 || inputs[0].empty() || inputs[1].size() + 1 != inputs[0].size()) {
    throw InputError("node '" + node.name + "' (cross_entropy) needs logits [..., vocab] and labels [...] of one rank less");
  }
  if (inputs[1].size() > 20) throw InputError("node '" + node.name + "' (cross_entropy): labels of rank above 20");
  const std::string positions = letters(inputs[1].size());  // a, b, ...: never 'v
  std::map<char, FactorKind> kinds{{'v', FactorKind::reduction}};
  for (char c : positions) kinds[c] = FactorKind::reduction;
  return {positions + "v," + positions + "->", {}, kinds};
}

// An op the table has no entry for, kept as data: every dim of every input
// and of the result is a factor of its own that must stay replicated, so the
// op runs on whole tensors whatever its arity or ranks. Its params (any) are
// operands after the inputs, replicated alike.
Equation opaque_equation(const Node& node, const std::vector<std::vector<int64_t>>& inputs) {
  if (inputs.empty()) throw InputError("node '" + node.name + "' (opaque) needs at least one tensor input");
  std::string text;
  std::map<char, FactorKind> kinds;
  std::size_t next = 0;
  auto term = [&](std::size_t rank) {
    std::string dims = letters(rank, next);
    next += rank;
    for (char c : dims) kinds[c] = FactorKind::needs_replication;
    return dims;
  };
  for (std::size_t i = 0; i < inputs.size(); ++i) text += (i ? "," : "") + term(inputs[i].size());
  for (const Param& p : node.params) text += "," + term(p.type.shape.size());
  text += "->" + term(node.type.shape.size());
  return {text, {}, kinds};
}

// Removes operands (by index) from "a,b,c->d".
std::string drop_operands(const std::string& equation, const std::vector<std::size_t>& indices) {
  const std::size_t arrow = equation.find("->");
  std::string kept;
  std::size_t index = 0, start = 0;
  const std::string lhs = equation.substr(0, arrow);
  while (true) {
    const std::size_t comma = lhs.find(',', start);
    const std::string term = lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (std::find(indices.begin(), indices.end(), index) == indices.end()) kept += (kept.empty() ? "" : ",") + term;
    ++index;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return kept + equation.substr(arrow);
}

std::map<std::string, OpKindInfo, std::less<>> build_table() {
  using K = FactorKind;
  const ParamInfo weight_in_out{"weight", true, {1, 0}};
  const ParamInfo bias{"bias", false, {}, true};
  const ParamInfo weight_as_stored{"weight", true, {}};
  const ParamInfo norm_weight{"weight", false, {}};
  // kind, fx opcode, fx target, equation, factor kinds, params, derive, flops per point, not iterated
  std::vector<OpKindInfo> entries = {
      {"linear", "call_module", "<class 'torch.nn.modules.linear.Linear'>", "...k,nk,n->...n", {{'k', K::reduction}},
       {weight_in_out, bias}, nullptr, 2, ""},
      {"matmul", "call_function", "<built-in method matmul>", "...mk,...kn->...mn", {{'k', K::reduction}}, {}, nullptr, 2, ""},
      {"gelu", "call_function", "<built-in function gelu>", "...->...", {}, {}, nullptr, 8, ""},
      {"relu", "call_function", "<function relu>", "...->...", {}, {}, nullptr, 1, ""},
      {"dropout", "call_function", "<function dropout>", "...->...", {}, {}, nullptr, 1, "", true},
      {"add", "call_function", "<built-in function add>", "...,...->...", {}, {}, nullptr, 1, ""},
      {"layernorm", "call_module", "<class 'torch.nn.modules.normalization.LayerNorm'>", "...d,d,d->...d",
       {{'d', K::needs_replication}}, {norm_weight, bias}, nullptr, 8, ""},
      {"softmax", "call_function", "<function softmax>", "...d->...d", {{'d', K::needs_replication}}, {}, nullptr, 5, ""},
      {"view", "call_method", "view", "", {}, {}, view_equation, 0, ""},
      {"permute", "call_method", "permute", "", {}, {}, permute_equation, 0, ""},
      {"transpose", "call_method", "transpose", "", {}, {}, transpose_equation, 0, ""},
      {"embedding", "call_module", "<class 'torch.nn.modules.sparse.Embedding'>", "...,vd->...d", {{'v', K::reduction}},
       {weight_as_stored}, nullptr, 1, "v"},
      {"conv1d", "call_module", "<class 'transformers.pytorch_utils.Conv1D'>", "", {{'k', K::reduction}},
       {weight_as_stored, bias}, conv1d_equation, 2, ""},
      {"split", "call_method", "split", "", {{'q', K::needs_replication}}, {}, split_equation, 0, ""},
      {"scale", "call_function", "<built-in function truediv>", "...->...", {}, {}, nullptr, 1, "", true},
      {"causal_mask", "call_function", "<built-in method where>", "...->...", {}, {}, nullptr, 1, ""},
      {"opaque", "call_function", "<unknown>", "", {}, {}, opaque_equation, 0, "", false, true},
      {"gelu_tanh", "call_module", "<class 'transformers.activations.NewGELUActivation'>", "...->...", {}, {}, nullptr, 8,
       ""},
      // Llama's pieces. rms_norm: x / rms(x) * weight over the last dim (real attr eps).
      {"rms_norm", "call_module", "<class 'LlamaRMSNorm'>", "...d,d->...d", {{'d', K::needs_replication}}, {norm_weight},
       nullptr, 4, ""},
      {"silu", "call_function", "<function silu>", "...->...", {}, {}, nullptr, 4, ""},
      {"mul", "call_function", "<built-in function mul>", "...,...->...", {}, {}, nullptr, 1, ""},
      // Rotary embedding on [..., seq, head_dim] (real attr theta): the
      // position table is a function of the global seq index, so seq and the
      // leading dims (batch, heads) may be sharded; head_dim pairs element i
      // with i + head_dim/2 and stays whole.
      {"rotary", "call_function", "<function apply_rotary>", "...sd->...sd", {{'d', K::needs_replication}}, {},
       nullptr, 3, ""},
      // Grouped-query attention's KV repetition [..., kv, s, d] ->
      // [..., kv*rep, s, d], kv major: sharding k shards the KV heads; a shard
      // of r alone leaves the input replicated (each device repeats its copy).
      {"repeat_kv", "call_function", "<function repeat_kv>", "...ksd->...(kr)sd", {}, {}, nullptr, 0, ""},
      // The loss head (a scalar); flops per logit: max, subtract, exp, sum.
      {"cross_entropy", "call_function", "<function cross_entropy>", "", {}, {}, cross_entropy_equation, 4, "", false,
       false, "v"},
  };
  std::map<std::string, OpKindInfo, std::less<>> table;
  for (auto& entry : entries) table.emplace(entry.kind, std::move(entry));
  return table;
}

}  // namespace

const std::map<std::string, OpKindInfo, std::less<>>& op_table() {
  static const auto table = build_table();
  return table;
}

const ParamInfo& param_info(const Node& node, const std::string& param) {
  static const ParamInfo unlisted{};  // shown as stored, not in the InSpec column
  const OpKindInfo& kind = op_info(node.kind, node.name);
  if (kind.any_params) return unlisted;
  for (const auto& info : kind.params) {
    if (info.name == param) return info;
  }
  throw InputError("node '" + node.name + "' (" + node.kind + ") has no param '" + param + "'");
}

bool is_boundary(std::string_view kind) { return kind == kPlaceholder || kind == kOutput; }

const OpKindInfo& op_info(std::string_view kind, std::string_view node_name) {
  const auto& table = op_table();
  auto it = table.find(kind);
  if (it == table.end()) {
    std::string where = node_name.empty() ? "" : " at node '" + std::string(node_name) + "'";
    throw InputError("unknown op kind '" + std::string(kind) + "'" + where);
  }
  return it->second;
}

std::string fx_op_of(const Node& node) {
  if (is_boundary(node.kind)) return node.kind;
  return op_info(node.kind, node.name).fx_op;
}

std::string fx_target_of(const Node& node) {
  if (!node.target.empty()) return node.target;
  if (node.kind == kPlaceholder) return node.name;
  if (node.kind == kOutput) return std::string(kOutput);
  return op_info(node.kind, node.name).fx_target;
}

ShardingRule rule_for(const Graph& graph, Vertex v) {
  const Node& node = graph.node(v);
  const OpKindInfo& info = op_info(node.kind, node.name);
  std::vector<std::vector<int64_t>> shapes;
  for (Vertex input : graph.inputs_of(v)) shapes.push_back(graph.node(input).type.shape);
  Equation equation = info.derive ? info.derive(node, shapes) : Equation{info.equation, {}};
  // Match the node's params to the table's, in order; absent optional ones drop their operand.
  std::size_t next = 0;
  std::vector<std::size_t> dropped;  // equation operand indices to remove
  if (info.any_params) {
    for (const Param& p : node.params) shapes.push_back(p.type.shape);
    next = node.params.size();
  }
  for (std::size_t p = 0; p < info.params.size(); ++p) {
    if (next < node.params.size() && node.params[next].name == info.params[p].name) {
      shapes.push_back(node.params[next++].type.shape);
    } else if (info.params[p].optional) {
      dropped.push_back(shapes.size() + dropped.size());
    } else {
      throw InputError("node '" + node.name + "' (" + node.kind + ") lacks param '" + info.params[p].name + "'");
    }
  }
  if (next != node.params.size()) {
    throw InputError("node '" + node.name + "' (" + node.kind + ") has unexpected param '" + node.params[next].name + "'");
  }
  if (!dropped.empty()) equation.text = drop_operands(equation.text, dropped);
  std::map<char, FactorKind> kinds = info.kinds;
  kinds.insert(equation.kinds.begin(), equation.kinds.end());
  try {
    return make_rule(equation.text, kinds, shapes, node.type.shape, equation.sizes);
  } catch (const InputError& e) {
    throw InputError("node '" + node.name + "' (" + node.kind + "): " + e.what());
  }
}

double forward_flops(const Graph& graph, Vertex v, const ShardingRule& rule) {
  const OpKindInfo& info = op_info(graph.node(v).kind, graph.node(v).name);
  double points = 1;
  for (const auto& f : rule.factors) {
    if (f.name.size() == 1 && info.not_iterated.find(f.name[0]) != std::string::npos) continue;
    points *= static_cast<double>(f.size);
  }
  return info.flops_per_point * points;
}

std::string rule_table_text() {
  std::string text;
  for (const auto& [kind, info] : op_table()) {
    text += kind + ": " + (info.derive ? "<from shapes and attrs>" : info.equation);
    for (const auto& [letter_char, factor_kind] : info.kinds) {
      text += " " + std::string(1, letter_char) + "=" + std::string(factor_kind_name(factor_kind));
    }
    if (!info.params.empty()) {
      text += " params=";
      for (std::size_t p = 0; p < info.params.size(); ++p) {
        text += (p ? "," : "") + info.params[p].name + (info.params[p].optional ? "?" : "");
      }
    }
    if (info.any_params) text += " params=*";
    std::ostringstream flops;
    flops << info.flops_per_point;
    text += " flops=" + flops.str();
    if (!info.not_iterated.empty()) text += " not_iterated=" + info.not_iterated;
    if (info.linear) text += " linear";
    if (!info.normalized.empty()) text += " normalized=" + info.normalized;
    text += "\n";
  }
  return text;
}

}  // namespace shardsynth::ir
