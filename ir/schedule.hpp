#pragma once
// The result of synthesis as Slapo-style directives:
//   sch["fc1"].shard("weight", dim=0)
//   sch["h.0.attn.c_attn"].shard("weight", dim=1, blocks=3)   (per-head shard of a fused q|k|v dim)
//   sch["fc1"].shard("weight", dim=0, axes=[0, 1])            (on a 2-D mesh)
//   sch["fc1"].sync(mode="fwd_pre", sync_op_or_fn="RR->SR")
//   sch["h.0.mlp.c_fc"].checkpoint()   (training: the output is recomputed for the backward)
// and the same in JSON. sync_op_or_fn is always "FROM->TO" in spec text
// (see spec.hpp), e.g. "RR+P->RR" is an all-reduce of a partial sum.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <optional>

namespace shardsynth::ir {

enum class DirectiveKind { shard, sync, checkpoint };

struct Directive {
  DirectiveKind kind = DirectiveKind::sync;  // shard a parameter, reshard a tensor at an op boundary, or recompute an output
  std::string node;     // the module or function key: sch["node"]
  std::string param;    // shard: parameter name ("weight")
  int dim = -1;         // shard: parameter dim in its stored layout (nn.Linear weight: 0 = out, 1 = in)
  int64_t blocks = 1;   // shard: the dim is cut into this many equal blocks, each sharded alike (fused q|k|v: 3)
  std::vector<int> axes;  // shard: mesh axes sharding the dim, major first; empty = axis 0 of a 1-D mesh
  std::string mode;     // sync: "fwd_pre" (on an input, before the op) or "fwd_post" (on the output, after it)
  std::string sync_op;  // sync: "FROM->TO" spec text
  int arg = -1;         // sync fwd_pre on an op with several tensor inputs: which input; -1 = the only one

  bool operator==(const Directive&) const = default;
};

// A training plan that keeps a parameter apart from its use names its
// storage as tensors of its own: "node.param:stored" (the parameter between
// steps), ":grad" (the gradient buffer), ":state" (the optimizer state). An
// entry left out is the one before it: stored = the use's spec, grad =
// stored, state = grad (costs/param_storage.hpp).
inline constexpr const char* kStoredSuffix = ":stored";
inline constexpr const char* kGradSuffix = ":grad";
inline constexpr const char* kStateSuffix = ":state";
// A parameter's copy in its use's spec, gathered (or resharded, or a tied
// use's copy) around the op's forward and again around its backward, when
// the use reads it in another spec than it is stored in: a transient tensor
// of the memory ledger, "node.param:gathered".
inline constexpr const char* kGatheredSuffix = ":gathered";

struct TensorSpec {
  std::string tensor;  // node name, "node.param" for a parameter, or a parameter's storage (suffixes above)
  std::string spec;    // spec text of that tensor in the chosen plan

  bool operator==(const TensorSpec&) const = default;
};

// What a planned tensor's bytes count as in a plan's memory figures.
enum class MemoryCategory { param, grad, optimizer, activation, transient };

// "param", "grad", "optimizer", "activation", "transient"; memory_category throws
// InputError naming anything else.
std::string category_name(MemoryCategory category);
MemoryCategory memory_category(const std::string& text);

// A time-step interval [from, to) of synth/liveness.hpp's order.
struct LiveSpan {
  int64_t from = 0;  // first time step the tensor is held (inclusive)
  int64_t to = 0;    // first time step it is no longer held (exclusive)

  bool operator==(const LiveSpan&) const = default;
};

// One tensor a device holds by plan (synth/memory_ledger.hpp), in the
// memory figures' "tensors" list: the runtime holds and frees it as planned
// (runtime/memory_ledger.hpp).
struct PlannedTensor {
  std::string name;        // node name (activation), "node.param", "node.param:grad", ":state" or ":gathered"
  MemoryCategory category = MemoryCategory::activation;  // which figure its bytes count in
  int64_t bytes = 0;       // bytes per device (its local shard)
  std::vector<LiveSpan> live;  // the time steps it is held, ascending, disjoint

  bool operator==(const PlannedTensor&) const = default;
};

// A plan's predicted bytes per device, by what they hold (synth
// --memory-report; costs/param_storage.hpp, synth/liveness.hpp). Every
// device of an intra-op plan holds the same shard sizes.
struct ScheduleMemory {
  int64_t params = 0;       // parameter shards, as stored
  int64_t grads = 0;        // gradient buffers (training)
  int64_t optimizer = 0;    // Adam's moments (training)
  int64_t activations = 0;  // activations live at the peak (in training: saved for the backward)
  int64_t transient = 0;    // gathered parameter copies live at the peak (training); collective scratch is not modelled
  int64_t peak = 0;         // the sum of the above: the plan's peak
  int64_t peak_step = 0;    // time step of the peak (synth/liveness.hpp's order)
  std::string peak_at;      // what runs at that step: "forward of NODE", "backward of NODE", "optimizer"
  std::vector<int64_t> zero_stages;  // training: parameter elements kept at ZeRO stage 0 (as used), 1, 2, 3
  int64_t recomputed_ops = 0;        // training: ops whose outputs are recomputed for the backward (checkpoint)
  int64_t recomputed = 0;            // training: bytes of those outputs, dropped after the forward's last read
  std::vector<PlannedTensor> tensors;  // every tensor held by plan, in lowering's order (JSON "tensors"; may be empty)

  bool operator==(const ScheduleMemory&) const = default;
};

struct Schedule {
  std::vector<int64_t> mesh;             // mesh shape the plan is for
  std::string cost_model;                // cost model preset name
  int64_t cost = 0;                      // plan cost in the cost model's unit
  bool proven_optimal = false;           // whether the solver proved no cheaper plan exists
  std::vector<Directive> directives;     // in graph order
  std::vector<TensorSpec> specs;         // every tensor's spec, in graph order
  std::string mode = "inference";        // "inference" or "training": the step the plan was priced for
  std::optional<ScheduleMemory> memory;  // predicted memory per device, when asked for (JSON key "memory")

  bool operator==(const Schedule&) const = default;
};

// `sch["fc1"].shard("weight", dim=0)` / `sch["fc1"].sync(mode="fwd_pre", sync_op_or_fn="RR->SR")`.
std::string to_text(const Directive& directive);
// One directive per line.
std::string directives_text(const Schedule& schedule);

nlohmann::json to_json(const Schedule& schedule);
// Throws InputError naming `where` (the file) and the missing or mistyped field.
Schedule schedule_from_json(const nlohmann::json& json, const std::string& where = "schedule");

}  // namespace shardsynth::ir
