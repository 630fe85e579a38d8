#include "costs/transfer.hpp"

#include <cmath>

#include "ir/dtype.hpp"

namespace shardsynth::costs {

TransferCost transfer_cost(const CostModel& model, const ir::TensorType& tensor, const ir::Spec& spec,
                           const ir::Mesh& group, const ir::Mesh& mesh) {
  TransferCost out;
  out.elements = ir::num_elements(ir::local_shape(tensor.shape, spec, group));
  out.bytes = out.elements * ir::dtype_bytes(tensor.dtype);
  if (model.unit() == "elements") {
    out.cost = out.elements;
    return out;
  }
  const double latency_ns = mesh.latency_us.empty() ? 0.0 : mesh.latency_us[0] * 1000.0;
  const double bandwidth = mesh.bandwidth_gbps.empty() ? 1.0 : mesh.bandwidth_gbps[0];  // bytes per ns
  out.cost = static_cast<int64_t>(std::ceil(latency_ns + static_cast<double>(out.bytes) / bandwidth));
  return out;
}

}  // namespace shardsynth::costs
