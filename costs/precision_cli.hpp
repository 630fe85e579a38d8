#pragma once
// Command-line flags of the mixed-precision policy (costs/precision.hpp),
// shared by the `synth` and `shard-run` commands. The compute dtype is the
// graph's own (--dtype of a model subcommand, or each tensor's "dtype" in a
// graph file). Header-only on purpose: only binaries include it, so the
// costs library itself does not depend on CLI11.
#include <string>

#include <CLI/CLI.hpp>

#include "costs/precision.hpp"
#include "ir/dtype.hpp"
#include "ir/error.hpp"

namespace shardsynth::costs {

struct PrecisionFlags {
  std::string reduce_dtype;          // --reduce-dtype; empty = the parameter's own dtype
  std::string master_dtype = "fp32";  // --master-dtype
  std::string loss_scale = "dynamic";  // --loss-scale: dynamic or none
};

// Adds --reduce-dtype, --master-dtype and --loss-scale.
inline void add_precision_options(CLI::App& app, PrecisionFlags& flags) {
  app.add_option("--reduce-dtype", flags.reduce_dtype,
                 "dtype gradients are reduced and kept in: fp32, bf16, fp16 (default: the parameter's dtype)");
  app.add_option("--master-dtype", flags.master_dtype, "dtype of the master weights and Adam's moments")
      ->capture_default_str();
  app.add_option("--loss-scale", flags.loss_scale,
                 "fp16 training: dynamic (torch.amp.GradScaler's scheme) or none (refused for fp16)")
      ->capture_default_str();
}

// The policy the flags give. Throws ir::InputError naming a bad value.
inline PrecisionPolicy make_policy(const PrecisionFlags& flags) {
  PrecisionPolicy policy;
  if (!flags.reduce_dtype.empty()) policy.reduce = ir::parse_dtype(flags.reduce_dtype);
  policy.master = ir::parse_dtype(flags.master_dtype);
  if (flags.loss_scale != "dynamic" && flags.loss_scale != "none") {
    throw ir::InputError("unknown --loss-scale '" + flags.loss_scale + "' (known: dynamic, none)");
  }
  policy.loss_scaling = flags.loss_scale == "dynamic";
  return policy;
}

}  // namespace shardsynth::costs
