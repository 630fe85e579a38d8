#pragma once
// The single-process reference: runs a whole graph unsharded on the CPU, with
// parameters and inputs from runtime/init.hpp, so a sharded run can be checked
// against it node by node.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// What a kernel sees of one node: the node, its operand values, and where
// this rank's shard sits in the global tensors (all zero for a whole tensor).
struct KernelCall {
  const ir::Node& node;                           // the node being run (attrs, real_attrs, global output type)
  std::vector<const Tensor*> inputs;              // tensor operands, in operand order
  std::map<std::string, const Tensor*> params;    // the node's params by attribute name ("weight", "bias")
  std::vector<int64_t> out_shape;                 // this rank's output shape (view's target); empty = node.type.shape
  std::vector<int64_t> in_offsets;                // per dim of input 0: global index of the local first element
  std::vector<int64_t> weight_offsets;            // per dim of the "weight" param: global index of the local first element
  std::function<Tensor(const Tensor&)> exchange;  // normalizing ops (ir::OpKindInfo::normalized) whose factor is sharded:
                                                  // gathers every shard's row statistics (costs/row_exchange.hpp); empty
                                                  // when the rows are whole here
};

// Tensor operand `i`; throws std::invalid_argument naming the node when it has fewer.
const Tensor& input(const KernelCall& call, std::size_t i);
// Param `name`, or null when the node omits it.
const Tensor* optional_param(const KernelCall& call, const std::string& name);
// Param `name`; throws std::invalid_argument naming the node when it lacks it.
const Tensor& param(const KernelCall& call, const std::string& name);

// Runs one node on whole tensors.
using KernelFn = std::function<Tensor(const KernelCall& call)>;

// The one dispatch table, op kind -> kernel, for every compute kind of the op
// table plus "output" (the identity). Placeholders are not in it. Every
// entry reads 16-bit operands widened to fp32 (runtime/fp32_operands.hpp).
const std::map<std::string, KernelFn>& reference_kernels();

// The exclusive upper bound of the integer ids placeholder `v` holds: the
// smallest row count of the embedding tables it feeds (2^24 when none).
int64_t input_vocab_limit(const ir::Graph& graph, ir::Vertex v);

// Runs `graph` in topological order and returns every node's output by node
// name (placeholders and "output" included). Parameters are
// taken from `params` by full name (node.name + "." + param.name, or
// param.tied_to when set) when present, else init_param(that name); an input
// is taken from `inputs` by placeholder name when present, else
// init_input(node, seed, vocab) where vocab is the smallest row count of the
// embedding tables it feeds (2^24 when it feeds none). Throws
// std::invalid_argument naming the node and kind for a kind without a kernel.
std::map<std::string, Tensor> run_reference(const ir::Graph& graph, uint64_t seed,
                                            const std::map<std::string, Tensor>& inputs = {},
                                            const std::map<std::string, Tensor>& params = {});

// As run_reference, but returns the output nodes' values only and drops every
// other value after its last use, so memory holds the live tensors alone.
std::map<std::string, Tensor> run_reference_outputs(const ir::Graph& graph, uint64_t seed,
                                                    const std::map<std::string, Tensor>& inputs = {},
                                                    const std::map<std::string, Tensor>& params = {});

}  // namespace shardsynth::runtime
