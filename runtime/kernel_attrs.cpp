#include "runtime/kernel_attrs.hpp"

#include <stdexcept>

#include "runtime/kernels.hpp"

namespace shardsynth::runtime {
namespace {

[[noreturn]] void lacks(const KernelCall& call, const std::string& what) {
  throw std::invalid_argument("node '" + call.node.name + "' (" + call.node.kind + ") lacks " + what);
}

}  // namespace

const std::vector<int64_t>& attr_list(const KernelCall& call, const std::string& name, std::size_t min_size) {
  const auto it = call.node.attrs.find(name);
  if (it == call.node.attrs.end() || it->second.size() < min_size) lacks(call, "attribute '" + name + "'");
  return it->second;
}

int64_t attr(const KernelCall& call, const std::string& name, std::size_t i) { return attr_list(call, name, i + 1)[i]; }

double real_attr(const KernelCall& call, const std::string& name) {
  const auto it = call.node.real_attrs.find(name);
  if (it == call.node.real_attrs.end()) lacks(call, "real attribute '" + name + "'");
  return it->second;
}

std::pair<int64_t, int64_t> causal_offsets(const KernelCall& call) {
  const auto& o = call.in_offsets;
  if (o.size() < 2) return {0, 0};
  return {o[o.size() - 2], o[o.size() - 1]};
}

int64_t seq_offset(const KernelCall& call) { return causal_offsets(call).first; }

int64_t embedding_offset(const KernelCall& call) { return call.weight_offsets.empty() ? 0 : call.weight_offsets[0]; }

const std::vector<int64_t>& view_shape(const KernelCall& call) {
  return call.out_shape.empty() ? call.node.type.shape : call.out_shape;
}

int64_t last_dim_offset(const KernelCall& call) { return call.in_offsets.empty() ? 0 : call.in_offsets.back(); }

Tensor global_row_stats(const KernelCall& call) {
  Tensor local = softmax_row_stats(input(call, 0));
  return call.exchange ? combine_row_stats(call.exchange(local)) : local;
}

}  // namespace shardsynth::runtime
