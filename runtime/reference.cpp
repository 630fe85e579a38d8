#include "runtime/reference.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/op_table.hpp"
#include "runtime/fp32_operands.hpp"
#include "runtime/init.hpp"
#include "runtime/kernel_attrs.hpp"
#include "runtime/kernels.hpp"

namespace shardsynth::runtime {
namespace {

std::map<std::string, KernelFn> build_kernels() {
  using C = const KernelCall&;
  return {
      {"linear", [](C c) { return linear(input(c, 0), param(c, "weight"), optional_param(c, "bias")); }},
      {"conv1d", [](C c) { return conv1d(input(c, 0), param(c, "weight"), optional_param(c, "bias")); }},
      {"matmul", [](C c) { return matmul(input(c, 0), input(c, 1)); }},
      {"embedding", [](C c) { return embedding(input(c, 0), param(c, "weight"), embedding_offset(c)); }},
      {"layernorm", [](C c) { return layernorm(input(c, 0), param(c, "weight"), param(c, "bias")); }},
      {"softmax", [](C c) { return softmax(input(c, 0)); }},
      {"gelu", [](C c) { return gelu(input(c, 0)); }},
      {"gelu_tanh", [](C c) { return gelu_tanh(input(c, 0)); }},
      {"relu", [](C c) { return relu(input(c, 0)); }},
      {"dropout", [](C c) { return dropout(input(c, 0)); }},
      {"add", [](C c) { return add(input(c, 0), input(c, 1)); }},
      {"scale", [](C c) { return scale(input(c, 0), real_attr(c, "divisor")); }},
      {"causal_mask",
       [](C c) {
         const auto [q_offset, k_offset] = causal_offsets(c);
         return causal_mask(input(c, 0), q_offset, k_offset);
       }},
      {"rms_norm", [](C c) { return rms_norm(input(c, 0), param(c, "weight"), static_cast<float>(real_attr(c, "eps"))); }},
      {"silu", [](C c) { return silu(input(c, 0)); }},
      {"mul", [](C c) { return mul(input(c, 0), input(c, 1)); }},
      {"rotary", [](C c) { return rotary(input(c, 0), real_attr(c, "theta"), seq_offset(c)); }},
      {"repeat_kv",
       [](C c) {
         const auto& shape = view_shape(c);
         if (shape.size() < 3) throw std::invalid_argument("node '" + c.node.name + "' (repeat_kv) has rank below 3");
         return repeat_kv(input(c, 0), shape[shape.size() - 3]);
       }},
      {"view", [](C c) { return view(input(c, 0), view_shape(c)); }},
      {"permute", [](C c) { return permute(input(c, 0), attr_list(c, "dims")); }},
      {"transpose", [](C c) { return transpose(input(c, 0), attr(c, "dims", 0), attr(c, "dims", 1)); }},
      {"split",
       [](C c) { return split(input(c, 0), attr(c, "dim"), attr(c, "sections"), attr(c, "index")); }},
      {"cross_entropy",
       [](C c) {
         return cross_entropy(input(c, 0), input(c, 1), global_row_stats(c), last_dim_offset(c),
                              real_attr(c, "divisor"));
       }},
      {std::string(ir::kOutput), [](C c) { return input(c, 0); }},
  };
}

// The vocabulary bound for an int64 placeholder: the fewest rows among the
// embedding tables it feeds and the vocabularies of the cross-entropy heads
// it labels, kMaxExactId when it feeds none.
int64_t vocab_limit(const ir::Graph& graph, ir::Vertex v) {
  int64_t limit = kMaxExactId;
  for (const auto& [user, index] : graph.users_of(v)) {
    const ir::Node& node = graph.node(user);
    if (node.kind == "cross_entropy" && index == 1) {  // labels index the logits' last dim
      const auto& logits = graph.node(graph.inputs_of(user).at(0)).type.shape;
      if (!logits.empty()) limit = std::min(limit, logits.back());
      continue;
    }
    if (node.kind != "embedding") continue;
    for (const ir::Param& p : node.params) {
      if (p.name == "weight" && !p.type.shape.empty()) limit = std::min(limit, p.type.shape[0]);
    }
  }
  return limit;
}

}  // namespace

const Tensor& input(const KernelCall& call, std::size_t i) {
  if (i >= call.inputs.size()) {
    throw std::invalid_argument("node '" + call.node.name + "' (" + call.node.kind + ") lacks operand " +
                                std::to_string(i));
  }
  return *call.inputs[i];
}

const Tensor* optional_param(const KernelCall& call, const std::string& name) {
  const auto it = call.params.find(name);
  return it == call.params.end() ? nullptr : it->second;
}

const Tensor& param(const KernelCall& call, const std::string& name) {
  const Tensor* p = optional_param(call, name);
  if (!p) throw std::invalid_argument("node '" + call.node.name + "' (" + call.node.kind + ") lacks param '" + name + "'");
  return *p;
}

int64_t input_vocab_limit(const ir::Graph& graph, ir::Vertex v) { return vocab_limit(graph, v); }

const std::map<std::string, KernelFn>& reference_kernels() {
  static const std::map<std::string, KernelFn> table = with_fp32_operands(build_kernels(), {}, kWeightByTileKinds);
  return table;
}

namespace {

// run_reference's walk; with `outputs_only`, values other than output nodes'
// are dropped after their last use.
std::map<std::string, Tensor> walk(const ir::Graph& graph, uint64_t seed, const std::map<std::string, Tensor>& inputs,
                                   const std::map<std::string, Tensor>& given_params, bool outputs_only) {
  std::map<std::string, Tensor> values;  // node name -> output
  std::map<std::string, std::size_t> uses_left;  // node name -> operand uses not yet run
  for (ir::Vertex v : graph.topological_order()) uses_left[graph.node(v).name] = graph.users_of(v).size();
  auto used = [&](ir::Vertex v) {
    if (!outputs_only) return;
    for (ir::Vertex in : graph.inputs_of(v)) {
      const ir::Node& producer = graph.node(in);
      if (--uses_left[producer.name] == 0 && producer.kind != ir::kOutput) values.erase(producer.name);
    }
  };
  std::map<std::string, Tensor> params;  // full (or tied-to) param name -> seeded value
  const auto& kernels = reference_kernels();
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    if (node.kind == ir::kPlaceholder) {
      const auto given = inputs.find(node.name);
      values[node.name] = given != inputs.end() ? given->second : init_input(node, seed, input_vocab_limit(graph, v));
      continue;
    }
    const auto kernel = kernels.find(node.kind);
    if (kernel == kernels.end()) {
      throw std::invalid_argument("run_reference: no kernel for node '" + node.name + "' of kind '" + node.kind + "'");
    }
    KernelCall call{node, {}, {}, {}, {}, {}};
    for (ir::Vertex in : graph.inputs_of(v)) call.inputs.push_back(&values.at(graph.node(in).name));
    for (const ir::Param& p : node.params) {
      const std::string full = p.tied_to.empty() ? node.name + "." + p.name : p.tied_to;
      if (const auto given = given_params.find(full); given != given_params.end()) {
        call.params[p.name] = &given->second;
        continue;
      }
      auto it = params.find(full);
      if (it == params.end()) it = params.emplace(full, init_param(full, p.type.shape, seed)).first;
      call.params[p.name] = &it->second;
    }
    values[node.name] = kernel->second(call);
    used(v);
  }
  return values;
}

}  // namespace

std::map<std::string, Tensor> run_reference(const ir::Graph& graph, uint64_t seed,
                                            const std::map<std::string, Tensor>& inputs,
                                            const std::map<std::string, Tensor>& given_params) {
  return walk(graph, seed, inputs, given_params, false);
}

std::map<std::string, Tensor> run_reference_outputs(const ir::Graph& graph, uint64_t seed,
                                                    const std::map<std::string, Tensor>& inputs,
                                                    const std::map<std::string, Tensor>& given_params) {
  std::map<std::string, Tensor> values = walk(graph, seed, inputs, given_params, true);
  std::erase_if(values, [&](const auto& entry) { return graph.node(*graph.find(entry.first)).kind != ir::kOutput; });
  return values;
}

}  // namespace shardsynth::runtime
