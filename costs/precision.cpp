#include "costs/precision.hpp"

#include <algorithm>
#include <set>

#include "ir/error.hpp"

namespace shardsynth::costs {
namespace {

constexpr int64_t kAdamMoments = 2;  // Adam's first and second moments

// The floating dtypes the graph's parameters compute in, ordered.
std::set<ir::DType> param_dtypes(const ir::Graph& graph) {
  std::set<ir::DType> dtypes;
  for (std::size_t v = 0; v < graph.size(); ++v) {
    for (const auto& p : graph.node(v).params) {
      if (ir::is_floating(p.type.dtype)) dtypes.insert(p.type.dtype);
    }
  }
  return dtypes;
}

std::string bare(ir::DType dtype) { return ir::dtype_name(dtype).substr(6); }  // drops "torch."

}  // namespace

ir::DType reduce_dtype(const PrecisionPolicy& policy, ir::DType param) { return policy.reduce.value_or(param); }

int64_t optimizer_bytes_per_element(const PrecisionPolicy& policy, ir::DType param) {
  const int64_t master = ir::dtype_bytes(policy.master);
  return kAdamMoments * master + (param == policy.master ? 0 : master);
}

void check_policy(const PrecisionPolicy& policy, const ir::Graph& graph, bool training) {
  if (policy.reduce && !ir::is_floating(*policy.reduce)) {
    throw ir::InputError("reduce dtype " + bare(*policy.reduce) + " is not a floating-point type");
  }
  for (ir::DType param : param_dtypes(graph)) {
    const int64_t compute = ir::dtype_bytes(param);
    if (ir::dtype_bytes(reduce_dtype(policy, param)) < compute) {
      throw ir::InputError("reduce dtype " + bare(reduce_dtype(policy, param)) + " is narrower than the compute dtype " +
                           bare(param) + ": gradients would be reduced with less precision than they are computed in");
    }
    if (!ir::is_floating(policy.master) || ir::dtype_bytes(policy.master) < compute) {
      throw ir::InputError("master dtype " + bare(policy.master) + " is narrower than the compute dtype " + bare(param));
    }
    if (training && ir::needs_loss_scaling(param) && !policy.loss_scaling) {
      throw ir::InputError(bare(param) + " training without loss scaling: small gradients underflow to zero "
                           "(use --loss-scale dynamic, or bf16)");
    }
  }
}

std::string policy_text(const PrecisionPolicy& policy, const ir::Graph& graph) {
  const auto dtypes = param_dtypes(graph);
  const bool plain = std::all_of(dtypes.begin(), dtypes.end(), [&](ir::DType d) {
    return d == policy.master && reduce_dtype(policy, d) == d;
  });
  if (plain) return "";
  std::string text;
  for (ir::DType param : dtypes) {
    text += (text.empty() ? "" : "; ") + bare(param) + " params, gradients reduced in " +
            bare(reduce_dtype(policy, param)) + ", master weights and Adam in " + bare(policy.master);
  }
  return text;
}

}  // namespace shardsynth::costs
