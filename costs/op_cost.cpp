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

std::optional<int64_t> moves_cost(const CostModel& model, const std::vector<Move>& moves, const ir::Mesh& mesh) {
  int64_t total = 0;
  for (const Move& m : moves) {
    const auto cost = model.reshard_cost(m.type, m.from, m.to, mesh);
    if (!cost) return std::nullopt;
    total += *cost;
  }
  return total;
}

std::vector<Move> op_moves(Mode mode, const ir::TensorType& result_type, const ir::Spec& result, const ir::Spec& output,
                           const std::vector<OperandUse>& params) {
  std::vector<Move> moves;
  if (result != output) {
    moves.push_back({result_type, result, output, Phase::forward});
    // The gradient of a resolved sum is the output's gradient, in the
    // result's dims (free unless the resolution also moved dims).
    if (mode == Mode::training) {
      moves.push_back({result_type, ir::without_partial(output), ir::without_partial(result), Phase::backward});
    }
  }
  if (mode == Mode::training) {
    for (const auto& p : params) {
      if (!p.grad_partial.empty()) moves.push_back({p.type, with_partial(p.spec, p.grad_partial), p.spec, Phase::backward});
    }
  }
  return moves;
}

std::optional<OpCost> op_cost(const CostModel& model, Mode mode, double forward_flops, int64_t shards,
                              const ir::TensorType& result_type, const ir::Spec& result, const ir::Spec& output,
                              const std::vector<OperandUse>& params, const ir::Mesh& mesh) {
  OpCost cost;
  const int64_t forward = model.compute_cost(forward_flops / static_cast<double>(shards), result_type.dtype, mesh);
  cost.compute = mode == Mode::training ? 3 * forward : forward;
  const auto resolve = moves_cost(model, op_moves(mode, result_type, result, output, {}), mesh);
  const auto sync = moves_cost(model, op_moves(mode, result_type, result, result, params), mesh);
  if (!resolve || !sync) return std::nullopt;
  cost.resolve = *resolve;
  cost.grad_sync = *sync;
  return cost;
}

std::vector<Move> edge_moves(Mode mode, const ir::Spec& produced, const OperandUse& use, bool needs_grad) {
  std::vector<Move> moves{{use.type, produced, use.spec, Phase::forward}};
  // The gradient of an operand read as a partial sum is the same for every
  // summand: its partial axes come back replicated. It is partial only on
  // the axes the op contracted it over.
  if (mode == Mode::training && needs_grad) {
    moves.push_back({use.type, with_partial(ir::without_partial(use.spec), use.grad_partial), ir::without_partial(produced),
                     Phase::backward});
  }
  return moves;
}

std::optional<int64_t> edge_cost(const CostModel& model, Mode mode, const ir::Spec& produced, const OperandUse& use,
                                 bool needs_grad, const ir::Mesh& mesh) {
  return moves_cost(model, edge_moves(mode, produced, use, needs_grad), mesh);
}

std::vector<Move> tied_param_moves(Mode mode, const ir::TensorType& type, const ir::Spec& stored, const ir::Spec& use,
                                   const PrecisionPolicy& policy) {
  if (mode == Mode::inference || stored == use) return {};
  const ir::TensorType grad{type.shape, reduce_dtype(policy, type.dtype)};
  return {{type, stored, use, Phase::forward}, {type, stored, use, Phase::backward}, {grad, use, stored, Phase::backward}};
}

std::optional<int64_t> tied_param_cost(const CostModel& model, Mode mode, const ir::TensorType& type,
                                       const ir::Spec& stored, const ir::Spec& use, const ir::Mesh& mesh,
                                       const PrecisionPolicy& policy) {
  return moves_cost(model, tied_param_moves(mode, type, stored, use, policy), mesh);
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
