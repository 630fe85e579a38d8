#include "costs/op_cost.hpp"

#include <algorithm>

#include "ir/error.hpp"

namespace shardsynth::costs {
namespace {

ir::Spec with_partial(ir::Spec spec, const std::vector<int>& axes) {
  spec.partial.insert(spec.partial.end(), axes.begin(), axes.end());
  std::sort(spec.partial.begin(), spec.partial.end());
  return spec;
}

}  // namespace

Mode parse_mode(std::string_view text) {
  if (text == "inference") return Mode::inference;
  if (text == "training") return Mode::training;
  throw ir::InputError("unknown mode '" + std::string(text) + "' (known: inference, training)");
}

std::string mode_name(Mode mode) { return mode == Mode::training ? "training" : "inference"; }

std::optional<OpCost> op_cost(const CostModel& model, Mode mode, double forward_flops, int64_t shards,
                              const ir::TensorType& result_type, const ir::Spec& result, const ir::Spec& output,
                              const std::vector<OperandUse>& params, const ir::Mesh& mesh) {
  OpCost cost;
  const int64_t forward = model.compute_cost(forward_flops / static_cast<double>(shards), result_type.dtype, mesh);
  cost.compute = mode == Mode::training ? 3 * forward : forward;
  if (result != output) {
    auto resolve = model.reshard_cost(result_type, result, output, mesh);
    if (!resolve) return std::nullopt;
    cost.resolve = *resolve;
    if (mode == Mode::training) {
      // The gradient of a resolved sum is the output's gradient, in the
      // result's dims (free unless the resolution also moved dims).
      auto back = model.reshard_cost(result_type, ir::without_partial(output), ir::without_partial(result), mesh);
      if (!back) return std::nullopt;
      cost.resolve += *back;
    }
  }
  if (mode == Mode::training) {
    for (const auto& p : params) {
      if (p.grad_partial.empty()) continue;
      auto sync = model.reshard_cost(p.type, with_partial(p.spec, p.grad_partial), p.spec, mesh);
      if (!sync) return std::nullopt;
      cost.grad_sync += *sync;
    }
  }
  return cost;
}

std::optional<int64_t> edge_cost(const CostModel& model, Mode mode, const ir::Spec& produced, const OperandUse& use,
                                 bool needs_grad, const ir::Mesh& mesh) {
  auto forward = model.reshard_cost(use.type, produced, use.spec, mesh);
  if (!forward || mode == Mode::inference || !needs_grad) return forward;
  // The gradient of an operand read as a partial sum is the same for every
  // summand: its partial axes come back replicated. It is partial only on
  // the axes the op contracted it over.
  auto backward = model.reshard_cost(use.type, with_partial(ir::without_partial(use.spec), use.grad_partial),
                                     ir::without_partial(produced), mesh);
  if (!backward) return std::nullopt;
  return *forward + *backward;
}

std::optional<int64_t> tied_param_cost(const CostModel& model, Mode mode, const ir::TensorType& type,
                                       const ir::Spec& stored, const ir::Spec& use, const ir::Mesh& mesh,
                                       const PrecisionPolicy& policy) {
  if (mode == Mode::inference || stored == use) return 0;
  const ir::TensorType grad{type.shape, reduce_dtype(policy, type.dtype)};
  auto forward = model.reshard_cost(type, stored, use, mesh);
  auto backward = model.reshard_cost(grad, use, stored, mesh);
  if (!forward || !backward) return std::nullopt;
  return 2 * *forward + *backward;
}

int64_t activation_bytes(const ir::TensorType& type, const ir::Spec& spec, const ir::Mesh& mesh) {
  return ir::num_elements(ir::local_shape(type.shape, spec, mesh)) * ir::dtype_bytes(type.dtype);
}

int64_t param_bytes(Mode mode, const ir::TensorType& type, const ir::Spec& spec, const ir::Mesh& mesh,
                    const PrecisionPolicy& policy) {
  const int64_t elements = ir::num_elements(ir::local_shape(type.shape, spec, mesh));
  const int64_t bytes = elements * ir::dtype_bytes(type.dtype);
  if (mode == Mode::inference) return bytes;
  const int64_t grad = elements * ir::dtype_bytes(reduce_dtype(policy, type.dtype));
  return bytes + grad + elements * optimizer_bytes_per_element(policy, type.dtype);
}

}  // namespace shardsynth::costs
