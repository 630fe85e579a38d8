#include "costs/collective.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace shardsynth::costs {
namespace {

}  // namespace

std::string collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::slice: return "slice";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
  }
  return "?";
}

std::string to_string(const Collective& c) {
  std::string text = collective_name(c.kind) + "(axis " + std::to_string(c.mesh_axis);
  if (c.src_dim >= 0) text += ", from dim " + std::to_string(c.src_dim);
  if (c.dst_dim >= 0) text += ", to dim " + std::to_string(c.dst_dim);
  return text + ")";
}

ir::Spec apply(const Collective& step, const ir::Spec& spec) {
  ir::Spec out = spec;
  auto drop = [&](std::vector<int>& axes) { axes.erase(std::remove(axes.begin(), axes.end(), step.mesh_axis), axes.end()); };
  if (step.src_dim >= 0) {
    drop(out.dims[step.src_dim]);
    if (out.dims[step.src_dim].empty()) out.set_blocks(step.src_dim, 1);
  }
  if (step.kind == CollectiveKind::all_reduce || step.kind == CollectiveKind::reduce_scatter) drop(out.partial);
  if (step.dst_dim >= 0) {
    if (out.dims[step.dst_dim].empty()) out.set_blocks(step.dst_dim, step.dst_blocks);
    out.dims[step.dst_dim].push_back(step.mesh_axis);
  }
  return out;
}

namespace {

bool contains(const std::vector<int>& axes, int axis) { return std::find(axes.begin(), axes.end(), axis) != axes.end(); }

// How many leading axes of dim d already sit where `to` wants them.
std::size_t common_prefix(const ir::Spec& current, const ir::Spec& to, int d) {
  const auto& have = current.dims[d];
  const auto& want = to.dims[d];
  if (!have.empty() && current.blocks_of(d) != to.blocks_of(d)) return 0;
  std::size_t n = 0;
  while (n < have.size() && n < want.size() && have[n] == want[n]) ++n;
  return n;
}

// Whether `axis` is the next axis dim e of `to` still lacks, with e holding exactly a prefix of its target.
bool can_join(const ir::Spec& current, const ir::Spec& to, int e, int axis) {
  const auto& have = current.dims[e];
  const auto& want = to.dims[e];
  return common_prefix(current, to, e) == have.size() && have.size() < want.size() && want[have.size()] == axis;
}

int target_dim(const ir::Spec& to, int axis) {
  for (int d = 0; d < to.rank(); ++d) {
    if (contains(to.dims[d], axis)) return d;
  }
  return -1;
}

}  // namespace

std::optional<std::vector<Collective>> plan_resharding(const ir::Spec& from, const ir::Spec& to, const ir::Mesh&) {
  if (from.rank() != to.rank()) throw std::invalid_argument("plan_resharding: specs describe different ranks");
  for (int axis : to.partial) {
    if (!contains(from.partial, axis)) return std::nullopt;
  }
  std::vector<Collective> plan;
  ir::Spec current = from;
  auto run = [&](const Collective& step) {
    plan.push_back(step);
    current = apply(step, current);
  };
  for (int axis : from.partial) {
    if (!contains(to.partial, axis) && target_dim(to, axis) < 0) run({CollectiveKind::all_reduce, axis, -1, -1, 1});
  }
  for (bool shed = true; shed;) {
    shed = false;
    for (int d = 0; d < current.rank(); ++d) {
      if (current.dims[d].size() <= common_prefix(current, to, d)) continue;
      const int axis = current.dims[d].back();
      const int e = target_dim(to, axis);
      if (e >= 0 && e != d && !contains(current.partial, axis) && can_join(current, to, e, axis)) {
        run({CollectiveKind::all_to_all, axis, d, e, to.blocks_of(e)});
      } else {
        run({CollectiveKind::all_gather, axis, d, -1, 1});
      }
      shed = true;
    }
  }
  for (int e = 0; e < current.rank(); ++e) {
    while (current.dims[e].size() < to.dims[e].size()) {
      const int axis = to.dims[e][current.dims[e].size()];
      const auto kind = contains(current.partial, axis) ? CollectiveKind::reduce_scatter : CollectiveKind::slice;
      run({kind, axis, -1, e, to.blocks_of(e)});
    }
  }
  if (current != to) throw std::logic_error("plan_resharding: the plan does not reach the target spec");
  return plan;
}

}  // namespace shardsynth::costs
