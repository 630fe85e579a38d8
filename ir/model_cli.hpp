#pragma once
// Command-line selection of a built-in model, shared by the `synth` and
// `shard-run` commands so both build the same graph from the same flags.
// Header-only on purpose: only binaries include it, so the ir library itself
// does not depend on CLI11.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/cli_numbers.hpp"
#include "ir/dtype.hpp"
#include "ir/error.hpp"
#include "ir/gpt2.hpp"
#include "ir/graph_json.hpp"
#include "ir/llama.hpp"
#include "ir/models.hpp"

namespace shardsynth::ir {

struct ModelFlags {
  MlpConfig mlp;                  // mlp sizes
  std::string gpt2_preset = "small";  // gpt2 --preset
  Gpt2Config gpt2{-1, -1, -1, -1, -1, -1, -1, DType::float32};  // gpt2 sizes; negative = the preset's
  std::string llama_preset = "llama-3-8b";  // llama --preset
  LlamaConfig llama{-1, -1, -1, -1, -1, -1, -1, -1, -1, false, 500000, 1e-5, DType::float32};  // llama sizes; negative = the preset's
  int llama_tied = -1;            // llama --tied (1) / --untied (0); -1 = the preset's
  std::string dtype = "float32";  // --dtype
  bool loss_head = false;         // --loss-head: gpt2 and llama end in the cross-entropy loss (ir::add_lm_head) in inference too
  bool training = false;          // set by the command, not a flag: a training graph, where gpt2 and llama always end in their loss
  std::string graph_path;         // positional graph JSON file (docs/graph_json.md); empty = a model subcommand
  std::string unknown_ops = "error";  // --unknown-ops: error or replicate
};

// Adds the `llama` subcommand with its size flags.
inline void add_llama_subcommand(CLI::App& app, ModelFlags& flags) {
  auto* llama = app.add_subcommand("llama", "Hugging Face LlamaForCausalLM's forward (eager attention)");
  std::string presets;
  for (const auto& name : llama_preset_names()) presets += (presets.empty() ? "" : ", ") + name;
  llama->add_option("--preset", flags.llama_preset, presets)->capture_default_str();
  llama->add_option("--layers", flags.llama.n_layer, "decoder layers, at most 1000 (default: the preset's)")->check(positive_number());
  llama->add_option("--hidden", flags.llama.hidden, "hidden size (default: the preset's)")->check(positive_number());
  llama->add_option("--heads", flags.llama.n_head, "query heads; must divide --hidden, head dim even (default: the preset's)")->check(positive_number());
  llama->add_option("--kv-heads", flags.llama.n_kv_head, "key/value heads; must divide --heads (default: the preset's)")->check(positive_number());
  llama->add_option("--ffn", flags.llama.ffn, "MLP intermediate size (default: the preset's)")->check(positive_number());
  llama->add_option("--vocab", flags.llama.vocab, "vocabulary size (default: the preset's)")->check(positive_number());
  llama->add_option("--seq", flags.llama.seq, "sequence length, at most the preset's max positions (default 1024)")->check(positive_number());
  llama->add_option("--batch", flags.llama.batch, "batch size (default 8)")->check(positive_number());
  llama->add_flag_function("--tied", [&flags](int64_t) { flags.llama_tied = 1; }, "lm_head shares model.embed_tokens.weight");
  llama->add_flag_function("--untied", [&flags](int64_t) { flags.llama_tied = 0; }, "lm_head has a weight of its own");
}

// Adds the `mlp`, `gpt2` and `llama` subcommands with their size flags, and --dtype.
inline void add_model_subcommands(CLI::App& app, ModelFlags& flags) {
  app.add_option("--dtype", flags.dtype, "element type: float32, float16, bfloat16 (or fp32, fp16, bf16)")->capture_default_str();
  app.add_flag("--loss-head", flags.loss_head,
               "gpt2, llama: end in the cross-entropy loss against a labels input in inference too (training graphs "
               "always do; default in inference: the logits)");
  auto* mlp = app.add_subcommand("mlp", "the built-in two-layer MLP: x -> fc1 -> gelu -> fc2");
  mlp->add_option("--batch", flags.mlp.batch, "batch size (x dim 0)")->capture_default_str()->check(positive_number());
  mlp->add_option("--seq", flags.mlp.seq, "sequence length (x dim 1)")->capture_default_str()->check(positive_number());
  mlp->add_option("--hidden", flags.mlp.hidden, "hidden size (x dim 2)")->capture_default_str()->check(positive_number());
  mlp->add_option("--ffn", flags.mlp.ffn, "fc1 output size")->capture_default_str()->check(positive_number());
  auto* gpt2 = app.add_subcommand("gpt2", "Hugging Face GPT2LMHeadModel's forward (eval mode)");
  gpt2->add_option("--preset", flags.gpt2_preset, "small, medium, large or xl")->capture_default_str();
  gpt2->add_option("--layers,--n-layer", flags.gpt2.n_layer, "transformer blocks, at most 1000 (default: the preset's)")->check(positive_number());
  gpt2->add_option("--heads,--n-head", flags.gpt2.n_head, "attention heads (default: the preset's)")->check(positive_number());
  gpt2->add_option("--embd,--n-embd", flags.gpt2.n_embd, "hidden size (default: the preset's)")->check(positive_number());
  gpt2->add_option("--seq", flags.gpt2.seq, "sequence length (default 1024)")->check(positive_number());
  gpt2->add_option("--batch", flags.gpt2.batch, "batch size (default 8)")->check(positive_number());
  gpt2->add_option("--vocab", flags.gpt2.vocab, "vocabulary size (default 50257)")->check(positive_number());
  add_llama_subcommand(app, flags);
}

// Adds a positional graph JSON file, the alternative to the model
// subcommands, and --unknown-ops for op kinds the table lacks.
inline void add_graph_option(CLI::App& app, ModelFlags& flags) {
  app.add_option("graph", flags.graph_path, "a graph JSON file (examples/export_fx.py) instead of a model subcommand");
  app.add_option("--unknown-ops", flags.unknown_ops,
                 "op kinds the table lacks in a graph file: error, or replicate (kept whole on every device)")
      ->capture_default_str();
}

// The model the command line chose: a subcommand's name, or "graph" for a
// graph file. Throws InputError when there is none or both.
inline std::string chosen_model(const CLI::App& app, const ModelFlags& flags) {
  const auto subcommands = app.get_subcommands();
  if (!flags.graph_path.empty() && !subcommands.empty()) {
    throw InputError("give either a model subcommand or a graph file, not both (got '" + subcommands.front()->get_name() +
                     "' and '" + flags.graph_path + "')");
  }
  if (!flags.graph_path.empty()) return "graph";
  if (subcommands.empty()) throw InputError("a model subcommand (mlp, gpt2, llama), a graph file or --iopddl FILE is required");
  return subcommands.front()->get_name();
}

// Builds the model named by the chosen subcommand ("graph": reads the graph
// file; one line per replicated unknown op goes to `warnings`). gpt2 and
// llama end in their cross-entropy loss head (ir::add_lm_head) in a training
// graph or with --loss-head; a graph file and mlp end where they end. Throws
// InputError on bad sizes or a bad graph file.
inline Graph build_model(const ModelFlags& flags, const std::string& model, std::vector<std::string>* warnings = nullptr) {
  if (model == "graph") {
    if (flags.loss_head) throw InputError("--loss-head builds the loss into a model subcommand's graph, not a graph file");
    return load_graph_json(flags.graph_path, {parse_unknown_ops(flags.unknown_ops), warnings});
  }
  const DType dtype = parse_dtype(flags.dtype);
  if (model == "mlp") {
    if (flags.loss_head) throw InputError("--loss-head needs a language model (gpt2, llama), not mlp");
    MlpConfig config = flags.mlp;
    config.dtype = dtype;
    return build_mlp(config);
  }
  // Each size flag given (>= 0) replaces the preset's.
  auto take = [](std::initializer_list<std::pair<int64_t, int64_t*>> flag_fields) {
    for (auto [flag, field] : flag_fields) {
      if (flag >= 0) *field = flag;
    }
  };
  if (model == "llama") {
    const LlamaConfig& f = flags.llama;
    LlamaConfig config = llama_preset(flags.llama_preset);
    take({{f.n_layer, &config.n_layer}, {f.hidden, &config.hidden}, {f.n_head, &config.n_head},
          {f.n_kv_head, &config.n_kv_head}, {f.ffn, &config.ffn}, {f.vocab, &config.vocab}, {f.seq, &config.seq},
          {f.batch, &config.batch}});
    if (flags.llama_tied >= 0) config.tied = flags.llama_tied == 1;
    config.dtype = dtype;
    config.loss_head = flags.loss_head || flags.training;
    return build_llama(config);
  }
  const Gpt2Config& f = flags.gpt2;
  Gpt2Config config = gpt2_preset(flags.gpt2_preset);
  take({{f.n_layer, &config.n_layer}, {f.n_head, &config.n_head}, {f.n_embd, &config.n_embd}, {f.seq, &config.seq},
        {f.batch, &config.batch}, {f.vocab, &config.vocab}});
  config.dtype = dtype;
  config.loss_head = flags.loss_head || flags.training;
  return build_gpt2(config);
}

}  // namespace shardsynth::ir
