#pragma once
// What `shard-run --check` holds a run to, written once for shard-run's
// intra-op and staged runs and the plan sweep (tests/e2e/plan_sweep_main.cpp):
// the bytes rank 0 sent per collective kind against the cost model's ring
// volume for the same steps (they must be equal), and the output against the
// unsharded model's within a relative tolerance.
#include <cstdint>
#include <vector>

#include "costs/collective.hpp"
#include "ir/graph.hpp"
#include "runtime/executor.hpp"
#include "runtime/tensor.hpp"

namespace shardsynth::runtime {

// Relative tolerance of --check against the unsharded model: fp32 sums in a
// different order.
inline constexpr double kCheckTolerance = 1e-5;
// The same for a graph with 16-bit tensors: every op's result is rounded to 8
// (bfloat16) or 11 (float16) significant bits, and a sharded op rounds its
// partial sums as well, so results differ by a few roundings of 2^-9.
inline constexpr double kHalfCheckTolerance = 1e-2;
// kHalfCheckTolerance when `graph` has a 16-bit tensor (runtime/half.hpp), else kCheckTolerance.
double check_tolerance(const ir::Graph& graph);

struct ByteCount {
  costs::CollectiveKind kind = costs::CollectiveKind::all_gather;  // the collective kind
  int64_t sent = 0;       // bytes this rank sent with it while executing the plan
  int64_t predicted = 0;  // the cost model's ring bytes for the same steps
};

// all_gather, reduce_scatter, all_reduce, all_to_all (shard-run's print order)
// with the run's sent and predicted bytes, 0 where the kind never ran.
std::vector<ByteCount> byte_counts(const RunResult& result);

// Prints (stdout) the byte table: one row per kind of byte_counts(result)
// with MISMATCH where sent and predicted differ, then the totals. Returns
// whether every row agrees.
bool print_byte_table(const RunResult& result);

struct OutputComparison {
  bool same_shape = false;  // whether the shapes agree (the errors are 0 otherwise)
  double max_abs = 0;       // largest absolute elementwise error
  double max_rel = 0;       // max_abs relative to the largest expected magnitude (max_abs when that is 0)
  bool ok = false;          // same shape and max_rel within the tolerance
};

OutputComparison compare_output(const Tensor& expected, const Tensor& actual, double tolerance = kCheckTolerance);

}  // namespace shardsynth::runtime
