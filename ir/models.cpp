#include "ir/models.hpp"

#include "ir/error.hpp"
#include "ir/op_table.hpp"

namespace shardsynth::ir {

Node placeholder(const std::string& name, TensorType type) {
  return Node{name, std::string(kPlaceholder), "", std::move(type), {}, {}};
}

Node linear(const std::string& name, int64_t in_features, int64_t out_features, std::vector<int64_t> out_shape,
            DType dtype) {
  return Node{name,
              "linear",
              "",
              {std::move(out_shape), dtype},
              {{"weight", {{out_features, in_features}, dtype}, ""}, {"bias", {{out_features}, dtype}, ""}},
              {}};
}

void add_lm_head(Graph& graph, const std::string& logits, bool loss_head) {
  const TensorType logits_type = graph.node(*graph.find(logits)).type;
  if (!loss_head) {
    graph.add_node(Node{std::string(kOutput), std::string(kOutput), "", logits_type, {}, {}, {}}, {logits});
    return;
  }
  const std::vector<int64_t> positions(logits_type.shape.begin(), logits_type.shape.end() - 1);
  graph.add_node(placeholder("labels", {positions, DType::int64}));
  const TensorType loss{{}, DType::float32};
  const auto divisor = static_cast<double>(num_elements(positions));
  graph.add_node(Node{"loss", "cross_entropy", "", loss, {}, {}, {{"divisor", divisor}}}, {logits, "labels"});
  graph.add_node(Node{std::string(kOutput), std::string(kOutput), "", loss, {}, {}, {}}, {"loss"});
}

Graph build_mlp(const MlpConfig& c) {
  for (auto [name, value] : {std::pair{"batch", c.batch}, {"seq", c.seq}, {"hidden", c.hidden}, {"ffn", c.ffn}}) {
    if (value < 1) throw InputError(std::string("mlp ") + name + " must be positive, got " + std::to_string(value));
  }
  num_elements({c.batch, c.seq, c.hidden, c.ffn});  // rejects sizes whose products overflow
  Graph g;
  g.add_node(placeholder("x", {{c.batch, c.seq, c.hidden}, c.dtype}));
  g.add_node(linear("fc1", c.hidden, c.ffn, {c.batch, c.seq, c.ffn}, c.dtype), {"x"});
  g.add_node(Node{"gelu", "gelu", "", {{c.batch, c.seq, c.ffn}, c.dtype}, {}, {}}, {"fc1"});
  g.add_node(linear("fc2", c.ffn, c.hidden, {c.batch, c.seq, c.hidden}, c.dtype), {"gelu"});
  g.add_node(Node{"output", std::string(kOutput), "", {{c.batch, c.seq, c.hidden}, c.dtype}, {}, {}}, {"fc2"});
  return g;
}

}  // namespace shardsynth::ir
