#include "ir/gpt2.hpp"

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder_scope.hpp"
#include "ir/error.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"

namespace shardsynth::ir {
namespace {

using Shape = BuilderScope::Shape;

// The module path of transformer block `layer`: the one place "h.{i}." is built.
std::string block_prefix(int64_t layer) { return "h." + std::to_string(layer) + "."; }

// GPT-2's own module kinds on top of the shared scope.
class Scope : public BuilderScope {
 public:
  using BuilderScope::BuilderScope;

  // LayerNorm over the last dim of `input`, whose extent is `width`.
  std::string layernorm(const std::string& name, const std::string& input, Shape shape, int64_t width) {
    return op(name, "layernorm", std::move(shape), {input}, {param("weight", {width}), param("bias", {width})});
  }

  // Hugging Face Conv1D with weight stored [in, out].
  std::string conv1d(const std::string& name, const std::string& input, Shape shape, int64_t in, int64_t out,
                     int64_t groups = 1) {
    IntAttrs attrs;
    if (groups != 1) attrs["groups"] = {groups};
    return op(name, "conv1d", std::move(shape), {input}, {param("weight", {in, out}), param("bias", {out})},
              std::move(attrs));
  }
};

// GPT2Attention's eager path: fused qkv projection, split into heads,
// scaled causal softmax attention, heads merged, output projection.
std::string attention(Scope& s, const std::string& input, const Gpt2Config& c) {
  const int64_t b = c.batch, t = c.seq, e = c.n_embd, h = c.n_head, d = e / h;
  const Shape hidden{b, t, e}, heads{b, h, t, d}, square{b, h, t, t};
  const std::string qkv = s.conv1d("attn.c_attn", input, {b, t, 3 * e}, e, 3 * e, 3);
  std::vector<std::string> per_part;  // query, key, value as [b, h, t, d]
  const std::vector<std::string> parts{"query", "key", "value"};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const std::string split = s.op("attn." + part, "split", hidden, {qkv}, {},
                                   {{"dim", {-1}}, {"sections", {3}}, {"index", {static_cast<int64_t>(i)}}});
    const std::string view = s.op("attn." + part + "_view", "view", {b, t, h, d}, {split});
    per_part.push_back(s.op("attn." + part + "_heads", "permute", heads, {view}, {}, {{"dims", {0, 2, 1, 3}}}));
  }
  const std::string key_t = s.op("attn.key_t", "transpose", {b, h, d, t}, {per_part[1]}, {}, {{"dims", {-1, -2}}});
  const std::string scores = s.op("attn.scores", "matmul", square, {per_part[0], key_t});
  const std::string scaled =
      s.op("attn.scale", "scale", square, {scores}, {}, {}, {{"divisor", std::sqrt(static_cast<double>(d))}});
  const std::string masked = s.op("attn.mask", "causal_mask", square, {scaled});
  const std::string probs = s.op("attn.softmax", "softmax", square, {masked});
  const std::string dropped = s.op("attn.attn_dropout", "dropout", square, {probs});
  const std::string context = s.op("attn.context", "matmul", heads, {dropped, per_part[2]});
  const std::string merged = s.op("attn.merge", "permute", {b, t, h, d}, {context}, {}, {{"dims", {0, 2, 1, 3}}});
  const std::string flat = s.op("attn.merge_view", "view", hidden, {merged});
  const std::string proj = s.conv1d("attn.c_proj", flat, hidden, e, e);
  return s.op("attn.resid_dropout", "dropout", hidden, {proj});
}

// GPT2Block: pre-norm attention and MLP, each added to the residual stream.
std::string block(Graph& graph, const Gpt2Config& c, int64_t layer, const std::string& input) {
  Scope s(graph, block_prefix(layer), c.dtype);
  const int64_t b = c.batch, t = c.seq, e = c.n_embd;
  const Shape hidden{b, t, e}, wide{b, t, 4 * e};
  const std::string attn = attention(s, s.layernorm("ln_1", input, hidden, e), c);
  const std::string residual = s.op("residual_1", "add", hidden, {input, attn});
  const std::string fc = s.conv1d("mlp.c_fc", s.layernorm("ln_2", residual, hidden, e), wide, e, 4 * e);
  const std::string act = s.op("mlp.act", "gelu_tanh", wide, {fc});
  const std::string proj = s.conv1d("mlp.c_proj", act, hidden, 4 * e, e);
  const std::string dropped = s.op("mlp.dropout", "dropout", hidden, {proj});
  return s.op("residual_2", "add", hidden, {residual, dropped});
}

// The four released GPT-2 sizes.
struct Preset {
  std::string_view name;  // preset name as given on the command line
  int64_t n_layer;        // transformer blocks
  int64_t n_head;         // attention heads per block
  int64_t n_embd;         // hidden size
};
constexpr Preset kPresets[] = {
    {"small", 12, 12, 768}, {"medium", 24, 16, 1024}, {"large", 36, 20, 1280}, {"xl", 48, 25, 1600}};

void validate(const Gpt2Config& c) {
  for (auto [name, value] : {std::pair{"n_layer", c.n_layer}, {"n_head", c.n_head}, {"n_embd", c.n_embd}, {"seq", c.seq},
                             {"batch", c.batch}, {"vocab", c.vocab}, {"n_positions", c.n_positions}}) {
    if (value < 1) throw InputError(std::string("gpt2 ") + name + " must be positive, got " + std::to_string(value));
  }
  if (c.n_layer > kGpt2MaxLayers) {
    throw InputError("gpt2 n_layer " + std::to_string(c.n_layer) + " exceeds " + std::to_string(kGpt2MaxLayers) +
                     ", the most the builder takes");
  }
  if (c.n_embd % c.n_head != 0) {
    throw InputError("gpt2 n_head " + std::to_string(c.n_head) + " does not divide n_embd " + std::to_string(c.n_embd));
  }
  if (c.seq > c.n_positions) {
    throw InputError("gpt2 seq " + std::to_string(c.seq) + " exceeds n_positions " + std::to_string(c.n_positions));
  }
  // Rejects sizes whose largest tensors overflow int64.
  num_elements({c.batch, c.seq, c.vocab});
  num_elements({c.batch, c.n_head, c.seq, c.seq});
  num_elements({c.batch, c.seq, 4, c.n_embd});
  num_elements({4, c.n_embd, c.n_embd});
  num_elements({c.vocab, c.n_embd});
  num_elements({c.n_positions, c.n_embd});
}

}  // namespace

Gpt2Config gpt2_preset(std::string_view name) {
  for (const Preset& preset : kPresets) {
    if (preset.name != name) continue;
    Gpt2Config c;
    c.n_layer = preset.n_layer;
    c.n_head = preset.n_head;
    c.n_embd = preset.n_embd;
    return c;
  }
  throw InputError("unknown gpt2 preset '" + std::string(name) + "' (expected small, medium, large or xl)");
}

Graph build_gpt2(const Gpt2Config& c) {
  validate(c);
  const int64_t b = c.batch, t = c.seq, e = c.n_embd;
  const Shape hidden{b, t, e};
  Graph graph;
  graph.add_node(placeholder("input_ids", {{b, t}, DType::int64}));
  graph.add_node(placeholder("position_ids", {{1, t}, DType::int64}));
  Scope top(graph, "", c.dtype);
  const std::string tokens =
      top.op("wte", "embedding", hidden, {"input_ids"}, {top.param("weight", {c.vocab, e})});
  const std::string positions =
      top.op("wpe", "embedding", {1, t, e}, {"position_ids"}, {top.param("weight", {c.n_positions, e})});
  std::string stream = top.op("drop", "dropout", hidden, {top.op("add", "add", hidden, {tokens, positions})});
  for (int64_t layer = 0; layer < c.n_layer; ++layer) stream = block(graph, c, layer, stream);
  const std::string normed = top.layernorm("ln_f", stream, hidden, e);
  // The LM head has no bias and shares wte's weight ([vocab, e] is Linear's [out, in]).
  const std::string logits = top.op("lm_head", "linear", {b, t, c.vocab}, {normed},
                                    {Param{"weight", {{c.vocab, e}, c.dtype}, tokens + ".weight"}});
  add_lm_head(graph, logits, c.loss_head);
  return graph;
}

}  // namespace shardsynth::ir
