#include "ir/llama.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "ir/builder_scope.hpp"
#include "ir/error.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"

namespace shardsynth::ir {
namespace {

using Shape = BuilderScope::Shape;

// nn.Linear without bias: weight stored [out, in].
std::string projection(BuilderScope& s, const std::string& name, const std::string& input, Shape shape, int64_t in,
                       int64_t out) {
  return s.op(name, "linear", std::move(shape), {input}, {s.param("weight", {out, in})});
}

std::string rms_norm(BuilderScope& s, const std::string& name, const std::string& input, Shape shape,
                     const LlamaConfig& c) {
  return s.op(name, "rms_norm", std::move(shape), {input}, {s.param("weight", {c.hidden})}, {},
              {{"eps", c.rms_norm_eps}});
}

// One of q, k, v: projected, viewed as heads and moved to [b, heads, t, d].
std::string heads_of(BuilderScope& s, const std::string& part, const std::string& input, int64_t heads,
                     const LlamaConfig& c) {
  const int64_t b = c.batch, t = c.seq, d = c.hidden / c.n_head;
  const std::string proj = projection(s, "self_attn." + part + "_proj", input, {b, t, heads * d}, c.hidden, heads * d);
  const std::string view = s.op("self_attn." + part + "_view", "view", {b, t, heads, d}, {proj});
  return s.op("self_attn." + part + "_heads", "transpose", {b, heads, t, d}, {view}, {}, {{"dims", {1, 2}}});
}

// LlamaAttention's eager path: q/k/v projections, rotary q and k, KV heads
// repeated to the query heads (skipped when they are equal, as Hugging Face
// does), scaled causal softmax attention, heads merged, o_proj.
std::string attention(BuilderScope& s, const std::string& input, const LlamaConfig& c) {
  const int64_t b = c.batch, t = c.seq, h = c.n_head, kv = c.n_kv_head, d = c.hidden / c.n_head;
  const Shape heads{b, h, t, d}, square{b, h, t, t};
  const BuilderScope::RealAttrs theta{{"theta", c.rope_theta}};
  const std::string query =
      s.op("self_attn.q_rotary", "rotary", heads, {heads_of(s, "q", input, h, c)}, {}, {}, theta);
  std::string key = s.op("self_attn.k_rotary", "rotary", {b, kv, t, d}, {heads_of(s, "k", input, kv, c)}, {}, {}, theta);
  std::string value = heads_of(s, "v", input, kv, c);
  if (kv != h) {
    key = s.op("self_attn.k_repeat", "repeat_kv", heads, {key});
    value = s.op("self_attn.v_repeat", "repeat_kv", heads, {value});
  }
  const std::string key_t = s.op("self_attn.key_t", "transpose", {b, h, d, t}, {key}, {}, {{"dims", {2, 3}}});
  const std::string scores = s.op("self_attn.scores", "matmul", square, {query, key_t});
  const std::string scaled =
      s.op("self_attn.scale", "scale", square, {scores}, {}, {}, {{"divisor", std::sqrt(static_cast<double>(d))}});
  const std::string masked = s.op("self_attn.mask", "causal_mask", square, {scaled});
  const std::string probs = s.op("self_attn.softmax", "softmax", square, {masked});
  const std::string context = s.op("self_attn.context", "matmul", heads, {probs, value});
  const std::string merged = s.op("self_attn.merge", "transpose", {b, t, h, d}, {context}, {}, {{"dims", {1, 2}}});
  const std::string flat = s.op("self_attn.merge_view", "view", {b, t, h * d}, {merged});
  return projection(s, "self_attn.o_proj", flat, {b, t, c.hidden}, h * d, c.hidden);
}

// LlamaDecoderLayer: pre-norm attention and SwiGLU MLP
// (down_proj(silu(gate_proj(x)) * up_proj(x))), each added to the residual.
std::string decoder_layer(Graph& graph, const LlamaConfig& c, int64_t layer, const std::string& input) {
  BuilderScope s(graph, "model.layers." + std::to_string(layer) + ".", c.dtype);
  const int64_t b = c.batch, t = c.seq, e = c.hidden, f = c.ffn;
  const Shape hidden{b, t, e}, wide{b, t, f};
  const std::string attn = attention(s, rms_norm(s, "input_layernorm", input, hidden, c), c);
  const std::string residual = s.op("residual_1", "add", hidden, {input, attn});
  const std::string normed = rms_norm(s, "post_attention_layernorm", residual, hidden, c);
  const std::string gate = s.op("mlp.act", "silu", wide, {projection(s, "mlp.gate_proj", normed, wide, e, f)});
  const std::string up = projection(s, "mlp.up_proj", normed, wide, e, f);
  const std::string product = s.op("mlp.gate_up", "mul", wide, {gate, up});
  const std::string down = projection(s, "mlp.down_proj", product, hidden, f, e);
  return s.op("residual_2", "add", hidden, {residual, down});
}

struct Preset {
  std::string_view name;   // preset name as given on the command line
  int64_t n_layer;         // decoder layers
  int64_t hidden;          // hidden size
  int64_t n_head;          // query heads
  int64_t n_kv_head;       // key/value heads
  int64_t ffn;             // intermediate size
  int64_t vocab;           // vocabulary
  int64_t max_positions;   // max_position_embeddings
  bool tied;               // tie_word_embeddings
  double rope_theta;       // rotary base
};
constexpr Preset kPresets[] = {
    {"llama-3.2-1b", 16, 2048, 32, 8, 8192, 128256, 131072, true, 500000},
    {"llama-3.2-3b", 28, 3072, 24, 8, 8192, 128256, 131072, true, 500000},
    {"llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, false, 10000},
    {"llama-3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, false, 500000},
    {"llama-3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, false, 500000},
};

void validate(const LlamaConfig& c) {
  for (auto [name, value] : {std::pair{"n_layer", c.n_layer}, {"hidden", c.hidden}, {"n_head", c.n_head},
                             {"n_kv_head", c.n_kv_head}, {"ffn", c.ffn}, {"vocab", c.vocab}, {"seq", c.seq},
                             {"batch", c.batch}, {"max_positions", c.max_positions}}) {
    if (value < 1) throw InputError(std::string("llama ") + name + " must be positive, got " + std::to_string(value));
  }
  if (c.n_layer > kLlamaMaxLayers) {
    throw InputError("llama n_layer " + std::to_string(c.n_layer) + " exceeds " + std::to_string(kLlamaMaxLayers) +
                     ", the most the builder takes");
  }
  if (c.hidden % c.n_head != 0) {
    throw InputError("llama n_head " + std::to_string(c.n_head) + " does not divide hidden " + std::to_string(c.hidden));
  }
  if (c.n_head % c.n_kv_head != 0) {
    throw InputError("llama n_kv_head " + std::to_string(c.n_kv_head) + " does not divide n_head " +
                     std::to_string(c.n_head));
  }
  if ((c.hidden / c.n_head) % 2 != 0) {
    throw InputError("llama head dim " + std::to_string(c.hidden / c.n_head) + " (hidden " + std::to_string(c.hidden) +
                     " / n_head " + std::to_string(c.n_head) + ") is odd; rotary embeddings need it even");
  }
  if (c.seq > c.max_positions) {
    throw InputError("llama seq " + std::to_string(c.seq) + " exceeds max_positions " + std::to_string(c.max_positions));
  }
  if (!(c.rope_theta > 0) || !(c.rms_norm_eps > 0)) throw InputError("llama rope_theta and rms_norm_eps must be positive");
  // Rejects sizes whose largest tensors overflow int64.
  num_elements({c.batch, c.seq, c.vocab});
  num_elements({c.batch, c.n_head, c.seq, c.seq});
  num_elements({c.batch, c.seq, c.ffn});
  num_elements({c.ffn, c.hidden});
  num_elements({c.vocab, c.hidden});
}

}  // namespace

LlamaConfig llama_preset(std::string_view name) {
  for (const Preset& p : kPresets) {
    if (p.name != name) continue;
    LlamaConfig c;
    c.n_layer = p.n_layer;
    c.hidden = p.hidden;
    c.n_head = p.n_head;
    c.n_kv_head = p.n_kv_head;
    c.ffn = p.ffn;
    c.vocab = p.vocab;
    c.max_positions = p.max_positions;
    c.tied = p.tied;
    c.rope_theta = p.rope_theta;
    return c;
  }
  std::string known;
  for (const auto& n : llama_preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown llama preset '" + std::string(name) + "' (expected " + known + ")");
}

std::vector<std::string> llama_preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

Graph build_llama(const LlamaConfig& c) {
  validate(c);
  const int64_t b = c.batch, t = c.seq, e = c.hidden;
  const Shape hidden{b, t, e};
  Graph graph;
  graph.add_node(placeholder("input_ids", {{b, t}, DType::int64}));
  BuilderScope top(graph, "", c.dtype);
  const std::string embed = "model.embed_tokens";
  std::string stream = top.op(embed, "embedding", hidden, {"input_ids"}, {top.param("weight", {c.vocab, e})});
  for (int64_t layer = 0; layer < c.n_layer; ++layer) stream = decoder_layer(graph, c, layer, stream);
  const std::string normed = rms_norm(top, "model.norm", stream, hidden, c);
  Param head = top.param("weight", {c.vocab, e});
  if (c.tied) head.tied_to = embed + ".weight";
  const std::string logits = top.op("lm_head", "linear", {b, t, c.vocab}, {normed}, {std::move(head)});
  add_lm_head(graph, logits, c.loss_head);
  return graph;
}

}  // namespace shardsynth::ir
