#pragma once
// What a choice costs. A cost model prices collectives and op compute in one
// integer unit (elements for `slapo`), and says which specs it can express.
// Resharding cost is always the sum of the plan_resharding steps' prices, so
// every model shares one notion of what a resharding does.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costs/collective.hpp"
#include "ir/mesh.hpp"
#include "ir/op_sharding.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::costs {

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Preset name, as `--cost-model` takes it.
  virtual std::string name() const = 0;
  // Unit of every cost this model returns ("elements", "ns").
  virtual std::string unit() const = 0;
  // Which specs the model expresses on `mesh`; throws ir::InputError when the
  // model cannot run on that mesh.
  virtual ir::SpecSpace spec_space(const ir::Mesh& mesh) const = 0;
  // Whether an op resolves a partial result (all-reduce) before handing it
  // on; the PR's model does, charging it to the op.
  virtual bool resolves_partial_in_op() const = 0;
  // Whether graph inputs may arrive sharded; when false they are replicated.
  virtual bool shards_graph_inputs() const = 0;
  // Whether graph outputs must end replicated; when false any spec without a
  // pending partial sum will do.
  virtual bool replicated_outputs() const = 0;
  // Cost of `flops` floating-point operations in element type `dtype` on
  // one device (at the mesh's peak for that dtype: ir::peak_tflops).
  virtual int64_t compute_cost(double flops, ir::DType dtype, const ir::Mesh& mesh) const = 0;
  // Price of one collective step on a tensor of global type `tensor` whose
  // spec before the step is `before`.
  virtual int64_t collective_cost(const Collective& step, const ir::TensorType& tensor, const ir::Spec& before,
                                  const ir::Mesh& mesh) const = 0;

  // Sum of the steps' prices, applying each step to the spec it sees; nullopt
  // when `to` is unreachable from `from`.
  std::optional<int64_t> reshard_cost(const ir::TensorType& tensor, const ir::Spec& from, const ir::Spec& to,
                                      const ir::Mesh& mesh) const;
};

// Known presets, by name: "alpha-beta" (the default), "slapo". Throws ir::InputError naming an unknown one.
std::unique_ptr<CostModel> make_cost_model(std::string_view name);
std::vector<std::string> cost_model_names();

}  // namespace shardsynth::costs
