#pragma once
// Mixed precision as data (FSDP2's MixedPrecisionPolicy, the ZeRO paper's
// accounting): which element type a parameter computes in, which its
// gradient is reduced and kept in, and which the master copy and Adam's
// moments keep. Costs read only dtype_bytes of these; nothing here or in
// the solver asks which dtype a tensor is.
//
// Per parameter element in training, with c = bytes of the compute dtype,
// r = of the reduce dtype, m = of the master dtype:
//   parameter  c   (the stored copy ops read, gathered at c bytes)
//   gradient   r   (reduced at r bytes)
//   optimizer  2m, plus m for a master copy when c != m
// so bf16 with fp32 master weights is 2 + 2 + 12 bytes (K = 12), and fp32
// is 4 + 4 + 8 as before.
#include <cstdint>
#include <optional>
#include <string>

#include "ir/dtype.hpp"
#include "ir/graph.hpp"

namespace shardsynth::costs {

struct PrecisionPolicy {
  std::optional<ir::DType> reduce;        // gradient reduction and buffer dtype; nullopt = the parameter's own
  ir::DType master = ir::DType::float32;  // master weights and Adam's two moments
  bool loss_scaling = true;               // training in float16: dynamic loss scaling (torch.amp.GradScaler)
};

// The dtype a parameter of dtype `param` has its gradient reduced in.
ir::DType reduce_dtype(const PrecisionPolicy& policy, ir::DType param);
// Bytes per element of optimizer state for a parameter of dtype `param`:
// Adam's two moments, plus the master copy when `param` is not the master dtype.
int64_t optimizer_bytes_per_element(const PrecisionPolicy& policy, ir::DType param);

// Throws ir::InputError (one line naming the values) when, for any floating
// parameter of `graph`: the reduce dtype is narrower than the compute dtype,
// the master dtype is narrower than the compute dtype, or the parameter
// computes in float16 in training without loss scaling.
void check_policy(const PrecisionPolicy& policy, const ir::Graph& graph, bool training);

// "bfloat16 params, gradients reduced in bfloat16, master weights and Adam
// in float32" for each dtype of the graph's floating parameters; empty when
// every one is kept in the master dtype and reduced in its own (plain
// single-precision training, which needs no line).
std::string policy_text(const PrecisionPolicy& policy, const ir::Graph& graph);

}  // namespace shardsynth::costs
