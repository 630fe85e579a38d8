#include "costs/slapo_cost_model.hpp"

#include "ir/error.hpp"

namespace shardsynth::costs {
namespace {
constexpr int kSpecDims = 2;  // the PR's specs cover the last two dims
}

ir::SpecSpace SlapoCostModel::spec_space(const ir::Mesh& mesh) const {
  if (mesh.rank() != 1) {
    throw ir::InputError("the slapo cost model needs a 1-D mesh, got '" + ir::mesh_string(mesh) + "'");
  }
  return ir::SpecSpace{kSpecDims, true, false};
}

int64_t SlapoCostModel::collective_cost(const Collective& step, const ir::TensorType& tensor, const ir::Spec&,
                                        const ir::Mesh& mesh) const {
  const auto& shape = tensor.shape;
  std::vector<int64_t> window(shape.end() - std::min<std::size_t>(shape.size(), kSpecDims), shape.end());
  const __int128 v = ir::num_elements(window);
  const __int128 p = mesh.shape.at(step.mesh_axis);
  switch (step.kind) {
    case CollectiveKind::slice: return 0;
    case CollectiveKind::all_gather: return static_cast<int64_t>(v / p);
    case CollectiveKind::all_to_all: return static_cast<int64_t>(v * (p - 1) / (p * p));
    case CollectiveKind::all_reduce: return static_cast<int64_t>(v);
    case CollectiveKind::reduce_scatter: return static_cast<int64_t>(v * (p - 1) / p);
  }
  return 0;
}

}  // namespace shardsynth::costs
