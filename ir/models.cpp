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
