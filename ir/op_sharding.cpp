#include "ir/op_sharding.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

namespace shardsynth::ir {
namespace {

struct Candidate {
  const ShardingRule& rule;  // the op's rule
  const Mesh& mesh;          // the mesh
  const SpecSpace& space;    // expressible specs

  int64_t parts(const std::vector<int>& axes) const {
    int64_t n = 1;
    for (int axis : axes) n *= mesh.shape[axis];
    return n;
  }

  // Spec of one tensor (dims -> factor ids); nullopt when a dim's sharding is not contiguous
  // or a dim outside the window is sharded.
  std::optional<Spec> tensor_spec(const std::vector<DimFactors>& dims, const std::vector<std::vector<int>>& axes) const {
    const int rank = static_cast<int>(dims.size());
    const int described = spec_rank(space, rank);
    Spec spec = replicated(described);
    for (int d = 0; d < rank; ++d) {
      std::vector<int> dim_axes;
      int64_t lead = 1;      // extent of the unsharded factors ahead of the sharded run
      bool started = false;  // whether the sharded run has begun
      bool open = true;      // every factor in the run so far is fully sharded
      for (int f : dims[d]) {
        const auto& fa = axes[f];
        const int64_t size = rule.factors[f].size;
        if (fa.empty()) {
          if (size == 1) continue;  // extent-1 factors are layout-neutral
          if (started) {
            open = false;
          } else {
            lead *= size;
          }
          continue;
        }
        if (started && !open) return std::nullopt;
        started = true;
        dim_axes.insert(dim_axes.end(), fa.begin(), fa.end());
        if (parts(fa) != size) open = false;
      }
      if (dim_axes.empty()) continue;
      const int slot = d - (rank - described);
      if (slot < 0) return std::nullopt;
      if (lead > 1 && !space.allow_blocks) return std::nullopt;
      spec.dims[slot] = std::move(dim_axes);
      spec.set_blocks(slot, lead);
    }
    return spec;
  }
};

}  // namespace

int spec_rank(const SpecSpace& space, int rank) { return space.window < 0 ? rank : std::min(space.window, rank); }

std::vector<OpSharding> enumerate_op_shardings(const ShardingRule& rule, const Mesh& mesh, const SpecSpace& space) {
  const int num_factors = static_cast<int>(rule.factors.size());
  std::vector<bool> in_result(num_factors, false);
  for (const auto& dim : rule.result) {
    for (int f : dim) in_result[f] = true;
  }
  bool has_reduction = false;
  for (const auto& f : rule.factors) has_reduction |= f.kind == FactorKind::reduction;

  Candidate candidate{rule, mesh, space};
  std::vector<OpSharding> out;
  std::set<std::pair<std::vector<Spec>, Spec>> seen;
  // choice[a] in [0, num_factors]: the factor mesh axis a shards, num_factors = none.
  std::vector<int> choice(mesh.rank(), 0);
  while (true) {
    std::vector<std::vector<int>> axes(num_factors);
    for (int a = 0; a < mesh.rank(); ++a) {
      if (choice[a] < num_factors) axes[choice[a]].push_back(a);
    }
    bool ok = true;
    bool any = false;
    for (int f = 0; f < num_factors && ok; ++f) {
      if (axes[f].empty()) continue;
      any = true;
      const Factor& factor = rule.factors[f];
      if (factor.kind == FactorKind::needs_replication) ok = false;
      if (!in_result[f] && factor.kind != FactorKind::reduction) ok = false;
      if (factor.size % candidate.parts(axes[f]) != 0) ok = false;
    }
    if (space.require_sharded_reduction && has_reduction && !any) ok = false;
    OpSharding sharding;
    if (ok) {
      for (const auto& operand : rule.operands) {
        auto spec = candidate.tensor_spec(operand, axes);
        if (!spec) {
          ok = false;
          break;
        }
        sharding.operands.push_back(std::move(*spec));
      }
    }
    if (ok) {
      auto result = candidate.tensor_spec(rule.result, axes);
      ok = result.has_value();
      if (ok) {
        sharding.result = std::move(*result);
        for (int f = 0; f < num_factors; ++f) {
          if (rule.factors[f].kind == FactorKind::reduction) {
            sharding.result.partial.insert(sharding.result.partial.end(), axes[f].begin(), axes[f].end());
          }
        }
        std::sort(sharding.result.partial.begin(), sharding.result.partial.end());
      }
    }
    if (ok && seen.emplace(sharding.operands, sharding.result).second) {
      sharding.factor_axes = std::move(axes);
      out.push_back(std::move(sharding));
    }
    // Next assignment: the last mesh axis varies fastest.
    int a = mesh.rank() - 1;
    while (a >= 0 && ++choice[a] > num_factors) choice[a--] = 0;
    if (a < 0) break;
  }
  return out;
}

}  // namespace shardsynth::ir
