#include "runtime/loss.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "ir/error.hpp"
#include "ir/op_table.hpp"
#include "runtime/init.hpp"

namespace shardsynth::runtime {

std::string loss_name(LossKind kind) {
  switch (kind) {
    case LossKind::next_token: return "next_token";
    case LossKind::in_graph: return "in_graph";
    case LossKind::mse: break;
  }
  return "mse";
}

LossChoice choose_loss(const ir::Graph& graph) {
  const ir::Node* output = nullptr;
  for (ir::Vertex v : graph.topological_order()) {
    if (graph.node(v).kind == ir::kOutput) output = &graph.node(v);
  }
  if (!output) throw ir::InputError("the model has no output node to take a loss of");
  const auto& shape = output->type.shape;
  if (shape.empty()) return {LossKind::in_graph, ""};
  const std::vector<int64_t> leading(shape.begin(), shape.end() - 1);
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    if (node.kind != ir::kPlaceholder || node.type.dtype != ir::DType::int64 || node.type.shape != leading) continue;
    for (const auto& [user, operand] : graph.users_of(v)) {
      (void)operand;
      for (const ir::Param& p : graph.node(user).params) {
        if (p.name == "weight" && !p.type.shape.empty() && p.type.shape[0] == shape.back() &&
            graph.node(user).kind == "embedding") {
          if (leading.empty() || leading.back() < 2) {
            throw ir::InputError("next-token loss needs at least 2 positions; the output has shape " +
                                 ir::shape_string(shape));
          }
          return {LossKind::next_token, node.name};
        }
      }
    }
  }
  return {};
}

namespace {

LossValue next_token(const Tensor& logits, const Tensor& labels) {
  const int64_t vocab = logits.shape.back();
  const int64_t seq = logits.shape[logits.shape.size() - 2];
  const int64_t rows = logits.numel() / vocab;
  if (labels.numel() != rows) throw std::invalid_argument("next-token loss: labels do not fit the logits");
  LossValue out{0, zeros(logits.shape)};
  const int64_t scored = rows / seq * (seq - 1);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (r % seq == seq - 1) continue;  // the last position has no next token
    const auto label = static_cast<int64_t>(labels.data[r + 1]);
    const float* z = logits.data.data() + r * vocab;
    const double peak = *std::max_element(z, z + vocab);
    double sum = 0;
    for (int64_t j = 0; j < vocab; ++j) sum += std::exp(z[j] - peak);
    total += std::log(sum) + peak - z[label];
    float* g = out.grad.data.data() + r * vocab;
    for (int64_t j = 0; j < vocab; ++j) {
      g[j] = static_cast<float>((std::exp(z[j] - peak) / sum - (j == label ? 1.0 : 0.0)) / static_cast<double>(scored));
    }
  }
  out.value = total / static_cast<double>(scored);
  return out;
}

LossValue mse(const Tensor& output, uint64_t seed) {
  LossValue out{0, zeros(output.shape)};
  const auto n = static_cast<double>(output.numel());
  double total = 0;
  for (int64_t i = 0; i < output.numel(); ++i) {
    const double target = 2.0 * uniform01(seed, "loss.target", static_cast<uint64_t>(i)) - 1.0;
    const double diff = output.data[i] - target;
    total += diff * diff;
    out.grad.data[i] = static_cast<float>(2.0 * diff / n);
  }
  out.value = total / n;
  return out;
}

}  // namespace

LossValue compute_loss(const LossChoice& choice, const Tensor& output, const Tensor* labels, uint64_t seed) {
  if (choice.kind == LossKind::in_graph) {
    if (output.numel() != 1) throw std::invalid_argument("in-graph loss: the output is not a scalar");
    return {output.data[0], Tensor{output.shape, {1.0f}}};
  }
  if (choice.kind == LossKind::mse) return mse(output, seed);
  if (!labels) throw std::invalid_argument("next-token loss without labels");
  return next_token(output, *labels);
}

}  // namespace shardsynth::runtime
