#pragma once
// The exchange an op that normalizes over a sharded factor makes inside it
// (ir::OpKindInfo::normalized: cross-entropy's softmax over a vocabulary
// sharded as in Megatron-LM's vocabulary-parallel cross-entropy). Each shard
// holds, for each of its `rows` local rows, its max and its sum of
// exponentials (two fp32 values); the shards along the mesh axes that shard
// the factor all-gather those pairs, after which every shard has the row's
// global max and sum. Megatron all-reduces the max and then the sum; one
// all-gather of the pairs gives the same numbers in one collective.
//
// The exchange is a resharding of a [rows, 2 n] fp32 tensor (n: devices
// along the axes) from dim 1 sharded over the axes to replicated, so the cost
// model prices it and the runtime runs it (and counts its bytes) like any
// other resharding.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "ir/sharding_rule.hpp"

namespace shardsynth::costs {

struct RowExchange {
  ir::TensorType type;  // [rows, 2 n] fp32: every shard's (max, sum) per row
  ir::Spec from;        // dim 1 sharded over the axes: each shard its own pair
  ir::Spec to;          // replicated: every shard every pair
};

// The exchange among the shards along `axes` (ascending) of `rows` local rows.
RowExchange row_exchange(int64_t rows, const std::vector<int>& axes, const ir::Mesh& mesh);

// Its price in `mode`: the forward's exchange, and in training the
// backward's again (the backward recomputes the rows' statistics rather than
// keeping them). 0 when `axes` is empty; nullopt when unreachable.
std::optional<int64_t> row_exchange_cost(const CostModel& model, Mode mode, int64_t rows, const std::vector<int>& axes,
                                         const ir::Mesh& mesh);

// The exchange of an op with rule `rule` under a sharding (`factor_axes`:
// per factor, the mesh axes sharding it): among the shards of the factors
// whose letters are in `normalized`, of as many rows as the other factors'
// local extents make. Priced as row_exchange_cost; 0 when no such factor is sharded.
std::optional<int64_t> op_exchange_cost(const CostModel& model, Mode mode, const ir::ShardingRule& rule,
                                        std::string_view normalized, const std::vector<std::vector<int>>& factor_axes,
                                        const ir::Mesh& mesh);

}  // namespace shardsynth::costs
