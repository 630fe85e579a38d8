#include "runtime/backward.hpp"

#include <stdexcept>
#include <utility>

#include "ir/op_table.hpp"
#include "runtime/fp32_operands.hpp"
#include "runtime/gradients.hpp"
#include "runtime/kernel_attrs.hpp"
#include "runtime/kernels.hpp"
#include "runtime/kernels_backward.hpp"

namespace shardsynth::runtime {
namespace {

std::map<std::string, BackwardFn> build_backward_kernels() {
  using C = const BackwardCall&;
  return {
      {"linear", [](C c) { return projection_backward_call(c, linear_backward); }},
      {"conv1d", [](C c) { return projection_backward_call(c, conv1d_backward); }},
      {"matmul", [](C c) { return pair_gradients(matmul_backward(input(c.forward, 0), input(c.forward, 1), c.grad_output)); }},
      {"embedding",
       [](C c) {
         const KernelCall& f = c.forward;
         Gradients g;
         g.inputs.emplace_back(std::nullopt);  // integer ids
         g.params.emplace("weight", embedding_backward(input(f, 0), param(f, "weight").shape, embedding_offset(f),
                                                       c.grad_output));
         return g;
       }},
      {"layernorm",
       [](C c) {
         LayerNormGrads grads = layernorm_backward(input(c.forward, 0), param(c.forward, "weight"), c.grad_output);
         Gradients g = input_gradient(std::move(grads.x));
         g.params.emplace("weight", std::move(grads.weight));
         g.params.emplace("bias", std::move(grads.bias));
         return g;
       }},
      {"softmax", [](C c) { return input_gradient(softmax_backward(c.output, c.grad_output)); }},
      {"gelu", [](C c) { return input_gradient(gelu_backward(input(c.forward, 0), c.grad_output)); }},
      {"gelu_tanh", [](C c) { return input_gradient(gelu_tanh_backward(input(c.forward, 0), c.grad_output)); }},
      {"relu", [](C c) { return input_gradient(relu_backward(input(c.forward, 0), c.grad_output)); }},
      {"dropout", [](C c) { return input_gradient(c.grad_output); }},
      {"add",
       [](C c) {
         return pair_gradients(add_backward(input(c.forward, 0).shape, input(c.forward, 1).shape, c.grad_output));
       }},
      {"scale", [](C c) { return input_gradient(scale_backward(c.grad_output, real_attr(c.forward, "divisor"))); }},
      {"causal_mask",
       [](C c) {
         const auto [q_offset, k_offset] = causal_offsets(c.forward);
         return input_gradient(causal_mask_backward(c.grad_output, q_offset, k_offset));
       }},
      {"rms_norm",
       [](C c) {
         const KernelCall& f = c.forward;
         RmsNormGrads grads = rms_norm_backward(input(f, 0), param(f, "weight"), c.grad_output,
                                                static_cast<float>(real_attr(f, "eps")));
         Gradients g = input_gradient(std::move(grads.x));
         g.params.emplace("weight", std::move(grads.weight));
         return g;
       }},
      {"silu", [](C c) { return input_gradient(silu_backward(input(c.forward, 0), c.grad_output)); }},
      {"mul", [](C c) { return pair_gradients(mul_backward(input(c.forward, 0), input(c.forward, 1), c.grad_output)); }},
      {"rotary",
       [](C c) {
         return input_gradient(rotary(c.grad_output, real_attr(c.forward, "theta"), seq_offset(c.forward), true));
       }},
      {"repeat_kv",
       [](C c) {
         const Tensor& x = input(c.forward, 0);
         if (x.rank() < 3) throw std::invalid_argument("repeat_kv: the input's rank is below 3");
         return input_gradient(repeat_kv_backward(c.grad_output, x.shape[x.rank() - 3]));
       }},
      {"view", [](C c) { return input_gradient(view_backward(c.grad_output, input(c.forward, 0).shape)); }},
      {"permute", [](C c) { return input_gradient(permute_backward(c.grad_output, attr_list(c.forward, "dims"))); }},
      {"transpose",
       [](C c) {
         return input_gradient(transpose_backward(c.grad_output, attr(c.forward, "dims", 0), attr(c.forward, "dims", 1)));
       }},
      {"split",
       [](C c) {
         const KernelCall& f = c.forward;
         return input_gradient(split_backward(c.grad_output, input(f, 0).shape, attr(f, "dim"), attr(f, "sections"),
                                        attr(f, "index")));
       }},
      {"cross_entropy",
       [](C c) {
         const KernelCall& f = c.forward;
         Gradients g = input_gradient(cross_entropy_backward(input(f, 0), input(f, 1), global_row_stats(f),
                                                             last_dim_offset(f), real_attr(f, "divisor"), c.grad_output));
         g.inputs.emplace_back(std::nullopt);  // integer labels
         return g;
       }},
      {std::string(ir::kOutput), [](C c) { return input_gradient(c.grad_output); }},
  };
}

}  // namespace

const std::map<std::string, BackwardFn>& reference_backward_kernels() {
  static const std::map<std::string, BackwardFn> table = with_fp32_operands(build_backward_kernels(), {}, kWeightByTileKinds);
  return table;
}

}  // namespace shardsynth::runtime
