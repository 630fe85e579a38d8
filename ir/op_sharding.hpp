#pragma once
// The legal shardings of one op: every way of assigning mesh axes to the
// factors of its sharding rule, turned into operand and result specs.
#include <vector>

#include "ir/mesh.hpp"
#include "ir/sharding_rule.hpp"
#include "ir/spec.hpp"

namespace shardsynth::ir {

// Which specs a cost model can express.
struct SpecSpace {
  int window = -1;  // specs describe this many trailing tensor dims; -1 = all dims
  bool require_sharded_reduction = false;  // ops with a reduction factor must shard some factor (the slapo preset)
  bool allow_blocks = true;                // whether blocked (strided) dim shardings are expressible
};

struct OpSharding {
  std::vector<std::vector<int>> factor_axes;  // per factor id: mesh axes sharding it, major first
  std::vector<Spec> operands;                 // spec each operand is consumed in (tensor inputs, then params)
  Spec result;                                // spec of the locally computed result; partial on reduction axes
};

// Number of trailing dims a spec describes for a tensor of `rank` dims.
int spec_rank(const SpecSpace& space, int rank);

// All legal shardings in a fixed order (factor assignments enumerated with
// mesh axis 0 varying slowest). Legal means: needs_replication factors and
// factors missing from the result (unless reductions) stay unsharded; each
// sharded factor's extent divides by its mesh axes; within a dim, the
// sharded factors form one run in which every factor but the last is fully
// sharded (anything else is not a layout a spec can name); unsharded factors
// ahead of that run make the dim blocked (spec.hpp), which needs
// `allow_blocks`; dims outside the window stay unsharded. Distinct assignments giving identical specs are kept once.
std::vector<OpSharding> enumerate_op_shardings(const ShardingRule& rule, const Mesh& mesh, const SpecSpace& space);

}  // namespace shardsynth::ir
