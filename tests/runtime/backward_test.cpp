// The backward table (runtime/backward.hpp) against finite differences: for
// every op kind, each gradient element of every float operand and parameter
// is compared with the central difference (f(x + e) - f(x - e)) / 2e of a
// random linear functional sum(r * output) of the forward kernel, summed in
// double, on small random shapes (broadcasting, shard offsets included).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/op_table.hpp"
#include "runtime/backward.hpp"
#include "runtime/kernels_backward.hpp"
#include "runtime/reference.hpp"

using namespace shardsynth;
using runtime::Tensor;

namespace {

// One forward call to differentiate.
struct Case {
  std::string label;                     // what the case covers, for failure messages
  ir::Node node;                         // kind, attrs and real_attrs; type.shape is view's target
  std::vector<Tensor> inputs;            // tensor operands, in operand order
  std::map<std::string, Tensor> params;  // params by name ("weight", "bias")
  std::vector<int64_t> out_shape;        // KernelCall.out_shape (view's local target), empty = node's
  std::vector<int64_t> in_offsets;       // KernelCall.in_offsets
  std::vector<int64_t> weight_offsets;   // KernelCall.weight_offsets
  std::set<std::size_t> ids;             // operands holding integer ids (no gradient)
};

constexpr double kEps = 1e-2;  // the finite-difference step

std::mt19937& rng() {
  static std::mt19937 gen(20240615);
  return gen;
}

// Uniform in [lo, hi], with a random sign when `signed_magnitude` (so |v| >= lo).
Tensor random_tensor(std::vector<int64_t> shape, float lo = -1.0f, float hi = 1.0f, bool signed_magnitude = false) {
  Tensor t = runtime::zeros(std::move(shape));
  std::uniform_real_distribution<float> u(lo, hi);
  std::bernoulli_distribution sign(0.5);
  for (float& v : t.data) v = signed_magnitude && sign(rng()) ? -u(rng()) : u(rng());
  return t;
}

ir::Node node_of(const std::string& kind, std::vector<int64_t> type_shape = {}) {
  return ir::Node{"n", kind, "", {std::move(type_shape), ir::DType::float32}, {}, {}, {}};
}

runtime::KernelCall call_of(const Case& c, const std::vector<Tensor>& inputs, const std::map<std::string, Tensor>& params) {
  runtime::KernelCall call{c.node, {}, {}, c.out_shape, c.in_offsets, c.weight_offsets};
  for (const Tensor& t : inputs) call.inputs.push_back(&t);
  for (const auto& [name, t] : params) call.params[name] = &t;
  return call;
}

Tensor forward(const Case& c, const std::vector<Tensor>& inputs, const std::map<std::string, Tensor>& params) {
  return runtime::reference_kernels().at(c.node.kind)(call_of(c, inputs, params));
}

// sum(r * (plus - minus)) / 2e in double: the central difference of the functional.
double central_difference(const Tensor& r, const Tensor& plus, const Tensor& minus) {
  double sum = 0;
  for (std::size_t i = 0; i < r.data.size(); ++i) {
    sum += static_cast<double>(r.data[i]) * (static_cast<double>(plus.data[i]) - minus.data[i]);
  }
  return sum / (2 * kEps);
}

// Compares `grad` with the central difference of every element of the value
// `perturb(sign)` perturbs; returns the largest |grad| seen.
template <typename Perturb>
double check_elements(const std::string& what, const Tensor& grad, const Tensor& value, const Tensor& r,
                      Perturb perturb) {
  CAPTURE(what);
  REQUIRE(grad.shape == value.shape);
  double largest = 0;
  for (std::size_t e = 0; e < value.data.size(); ++e) {
    const double fd = central_difference(r, perturb(e, kEps), perturb(e, -kEps));
    CAPTURE(e);
    CHECK(grad.data[e] == doctest::Approx(fd).epsilon(1e-2).scale(0.2));
    largest = std::max(largest, std::abs(static_cast<double>(grad.data[e])));
  }
  return largest;
}

void check_case(const Case& c) {
  CAPTURE(c.label);
  const Tensor out = forward(c, c.inputs, c.params);
  const Tensor r = random_tensor(out.shape);
  const runtime::KernelCall call = call_of(c, c.inputs, c.params);
  const runtime::Gradients g =
      runtime::reference_backward_kernels().at(c.node.kind)(runtime::BackwardCall{call, out, r});
  REQUIRE(g.inputs.size() == c.inputs.size());
  double largest = 0;
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.ids.count(i)) {
      CHECK_FALSE(g.inputs[i].has_value());
      continue;
    }
    REQUIRE(g.inputs[i].has_value());
    largest = std::max(largest, check_elements("input " + std::to_string(i), *g.inputs[i], c.inputs[i], r,
                                               [&](std::size_t e, double step) {
                                                 std::vector<Tensor> moved = c.inputs;
                                                 moved[i].data[e] += static_cast<float>(step);
                                                 return forward(c, moved, c.params);
                                               }));
  }
  REQUIRE(g.params.size() == c.params.size());
  for (const auto& entry : c.params) {
    // clang 14 cannot capture a structured binding in a lambda: named copies.
    const std::string name = entry.first;
    const Tensor& value = entry.second;
    const auto it = g.params.find(name);
    REQUIRE_MESSAGE(it != g.params.end(), "no gradient for param " << name);
    largest = std::max(largest, check_elements("param " + name, it->second, value, r, [&](std::size_t e, double step) {
                         std::map<std::string, Tensor> moved = c.params;
                         moved[name].data[e] += static_cast<float>(step);
                         return forward(c, c.inputs, moved);
                       }));
  }
  CHECK(largest > 1e-3);  // a gradient that is zero everywhere would match nothing worth checking
}

Case make(const std::string& label, ir::Node node, std::vector<Tensor> inputs, std::map<std::string, Tensor> params = {}) {
  return Case{label, std::move(node), std::move(inputs), std::move(params), {}, {}, {}, {}};
}

Case with_attr(Case c, const std::string& name, std::vector<int64_t> values) {
  c.node.attrs[name] = std::move(values);
  return c;
}

// Ids drawn from [0, vocab) as exact floats.
Tensor random_ids(std::vector<int64_t> shape, int vocab) {
  Tensor t = runtime::zeros(std::move(shape));
  std::uniform_int_distribution<int> u(0, vocab - 1);
  for (float& v : t.data) v = static_cast<float>(u(rng()));
  return t;
}

// Every case, of every op kind in the table.
std::vector<Case> all_cases() {
  std::vector<Case> cases;
  cases.push_back(make("linear with bias", node_of("linear"), {random_tensor({2, 3, 4})},
                       {{"weight", random_tensor({5, 4})}, {"bias", random_tensor({5})}}));
  cases.push_back(make("linear without bias", node_of("linear"), {random_tensor({3, 4})}, {{"weight", random_tensor({2, 4})}}));
  cases.push_back(make("conv1d with bias", node_of("conv1d"), {random_tensor({2, 2, 4})},
                       {{"weight", random_tensor({4, 3})}, {"bias", random_tensor({3})}}));
  cases.push_back(make("matmul batched", node_of("matmul"), {random_tensor({2, 3, 4}), random_tensor({2, 4, 2})}));
  cases.push_back(make("matmul both broadcast", node_of("matmul"), {random_tensor({2, 1, 3, 4}), random_tensor({3, 4, 2})}));
  cases.push_back(make("matmul rank-2 a", node_of("matmul"), {random_tensor({3, 4}), random_tensor({2, 4, 2})}));
  Case whole = make("embedding whole table", node_of("embedding"), {random_ids({2, 3}, 5)}, {{"weight", random_tensor({5, 3})}});
  whole.ids = {0};
  cases.push_back(whole);
  // A vocab shard holding rows 3..6 of 10; ids fall inside and outside it.
  Case shard = make("embedding shard at offset 3", node_of("embedding"), {Tensor{{2, 4}, {0, 3, 6, 7, 4, 3, 9, 5}}},
                    {{"weight", random_tensor({4, 3})}});
  shard.ids = {0};
  shard.weight_offsets = {3, 0};
  cases.push_back(shard);
  cases.push_back(make("layernorm", node_of("layernorm"), {random_tensor({3, 6}, -2.0f, 2.0f)},
                       {{"weight", random_tensor({6}, 0.5f, 1.5f)}, {"bias", random_tensor({6})}}));
  cases.push_back(make("softmax", node_of("softmax"), {random_tensor({2, 3, 5}, -2.0f, 2.0f)}));
  // The loss head on whole logits (the vocabulary-parallel form: tests/runtime/kernels_loss_test.cpp).
  ir::Node loss = node_of("cross_entropy");
  loss.real_attrs["divisor"] = 6;
  Case cross_entropy = make("cross_entropy", loss, {random_tensor({2, 3, 5}, -2.0f, 2.0f), random_ids({2, 3}, 5)});
  cross_entropy.ids = {1};
  cases.push_back(cross_entropy);
  cases.push_back(make("gelu", node_of("gelu"), {random_tensor({2, 7}, -3.0f, 3.0f)}));
  cases.push_back(make("gelu_tanh", node_of("gelu_tanh"), {random_tensor({2, 7}, -3.0f, 3.0f)}));
  cases.push_back(make("relu", node_of("relu"), {random_tensor({3, 4}, 0.1f, 1.0f, true)}));
  cases.push_back(make("dropout", node_of("dropout"), {random_tensor({2, 3})}));
  cases.push_back(make("add same shape", node_of("add"), {random_tensor({2, 3}), random_tensor({2, 3})}));
  cases.push_back(make("add both broadcast", node_of("add"), {random_tensor({2, 1, 3}), random_tensor({4, 1})}));
  cases.push_back(make("add lower rank", node_of("add"), {random_tensor({2, 3, 4}), random_tensor({4})}));
  Case scaled = make("scale", node_of("scale"), {random_tensor({2, 3})});
  scaled.node.real_attrs["divisor"] = 2.5;
  cases.push_back(scaled);
  cases.push_back(make("causal_mask whole", node_of("causal_mask"), {random_tensor({2, 3, 3})}));
  // Query rows 2..3 against key cols 1..3 of a larger score matrix: (q 2, k 3) is masked.
  Case block = make("causal_mask at offsets (2, 1)", node_of("causal_mask"), {random_tensor({1, 2, 3})});
  block.in_offsets = {0, 2, 1};
  cases.push_back(block);
  cases.push_back(make("view to the node's shape", node_of("view", {3, 4}), {random_tensor({2, 6})}));
  Case local_view = make("view to a local shape", node_of("view", {6, 4}), {random_tensor({2, 2, 3})});
  local_view.out_shape = {3, -1};
  cases.push_back(local_view);
  cases.push_back(with_attr(make("permute", node_of("permute"), {random_tensor({2, 3, 4})}), "dims", {2, 0, 1}));
  cases.push_back(with_attr(make("permute negative dims", node_of("permute"), {random_tensor({2, 3, 4})}), "dims", {1, -1, 0}));
  cases.push_back(with_attr(make("transpose", node_of("transpose"), {random_tensor({2, 3, 4})}), "dims", {0, -1}));
  Case middle = with_attr(make("split middle part", node_of("split"), {random_tensor({2, 6, 3})}), "dim", {1});
  middle.node.attrs["sections"] = {3};
  middle.node.attrs["index"] = {1};
  cases.push_back(middle);
  Case last = with_attr(make("split last dim", node_of("split"), {random_tensor({2, 2, 6})}), "dim", {-1});
  last.node.attrs["sections"] = {2};
  last.node.attrs["index"] = {1};
  cases.push_back(last);
  cases.push_back(make("output", node_of(std::string(ir::kOutput)), {random_tensor({2, 3})}));
  Case rms = make("rms_norm", node_of("rms_norm"), {random_tensor({3, 6}, -2.0f, 2.0f)},
                  {{"weight", random_tensor({6}, 0.5f, 1.5f)}});
  rms.node.real_attrs["eps"] = 1e-5;
  cases.push_back(rms);
  cases.push_back(make("silu", node_of("silu"), {random_tensor({2, 7}, -3.0f, 3.0f)}));
  cases.push_back(make("mul", node_of("mul"), {random_tensor({2, 3}), random_tensor({2, 3})}));
  // A seq shard at rows 3..4 of [b 1, heads 2, seq, head_dim 4].
  Case turned = make("rotary at seq offset 3", node_of("rotary"), {random_tensor({1, 2, 2, 4})});
  turned.node.real_attrs["theta"] = 10.0;
  turned.in_offsets = {0, 0, 3, 0};
  cases.push_back(turned);
  cases.push_back(make("repeat_kv 2 heads to 6", node_of("repeat_kv", {1, 6, 2, 3}), {random_tensor({1, 2, 2, 3})}));
  return cases;
}

// Runs every case of `kind`; fails when there is none.
void check_kind(const std::string& kind) {
  int found = 0;
  for (const Case& c : all_cases()) {
    if (c.node.kind != kind) continue;
    ++found;
    check_case(c);
  }
  CHECK_MESSAGE(found > 0, "no finite-difference case for " << kind);
}

}  // namespace

TEST_CASE("backward_TableHasEveryForwardKind") {
  const auto& backward = runtime::reference_backward_kernels();
  for (const auto& entry : runtime::reference_kernels()) {
    const std::string kind = entry.first;
    CAPTURE(kind);
    const auto it = backward.find(kind);
    REQUIRE(it != backward.end());
    CHECK(static_cast<bool>(it->second));
  }
  CHECK(backward.size() == runtime::reference_kernels().size());
}

TEST_CASE("backward_EveryKindHasAFiniteDifferenceCase") {
  std::set<std::string> covered;
  for (const Case& c : all_cases()) covered.insert(c.node.kind);
  for (const auto& entry : runtime::reference_backward_kernels()) {
    const std::string kind = entry.first;
    CAPTURE(kind);
    CHECK(covered.count(kind) == 1);
  }
}

TEST_CASE("backward_Linear_MatchesFiniteDifferences") { check_kind("linear"); }
TEST_CASE("backward_Conv1d_MatchesFiniteDifferences") { check_kind("conv1d"); }
TEST_CASE("backward_MatmulBroadcast_MatchesFiniteDifferences") { check_kind("matmul"); }
TEST_CASE("backward_EmbeddingOffset_MatchesFiniteDifferences") { check_kind("embedding"); }
TEST_CASE("backward_Layernorm_MatchesFiniteDifferences") { check_kind("layernorm"); }
TEST_CASE("backward_Softmax_MatchesFiniteDifferences") { check_kind("softmax"); }
TEST_CASE("backward_Gelu_MatchesFiniteDifferences") { check_kind("gelu"); }
TEST_CASE("backward_GeluTanh_MatchesFiniteDifferences") { check_kind("gelu_tanh"); }
TEST_CASE("backward_Relu_MatchesFiniteDifferences") { check_kind("relu"); }
TEST_CASE("backward_Dropout_MatchesFiniteDifferences") { check_kind("dropout"); }
TEST_CASE("backward_AddBroadcast_MatchesFiniteDifferences") { check_kind("add"); }
TEST_CASE("backward_Scale_MatchesFiniteDifferences") { check_kind("scale"); }
TEST_CASE("backward_CausalMaskOffsets_MatchesFiniteDifferences") { check_kind("causal_mask"); }
TEST_CASE("backward_View_MatchesFiniteDifferences") { check_kind("view"); }
TEST_CASE("backward_Permute_MatchesFiniteDifferences") { check_kind("permute"); }
TEST_CASE("backward_Transpose_MatchesFiniteDifferences") { check_kind("transpose"); }
TEST_CASE("backward_Split_MatchesFiniteDifferences") { check_kind("split"); }
TEST_CASE("backward_Output_MatchesFiniteDifferences") { check_kind(std::string(ir::kOutput)); }
TEST_CASE("backward_RmsNorm_MatchesFiniteDifferences") { check_kind("rms_norm"); }
TEST_CASE("backward_Silu_MatchesFiniteDifferences") { check_kind("silu"); }
TEST_CASE("backward_Mul_MatchesFiniteDifferences") { check_kind("mul"); }
TEST_CASE("backward_RotarySeqOffset_MatchesFiniteDifferences") { check_kind("rotary"); }
TEST_CASE("backward_RepeatKv_MatchesFiniteDifferences") { check_kind("repeat_kv"); }

TEST_CASE("backward_HandComputedValues") {
  // relu at exactly 0 passes no gradient (torch's choice); causal_mask zeroes the masked entries.
  const Tensor x{{4}, {-1, 0, 0.5f, 2}};
  const Tensor dy{{4}, {1, 1, 1, 1}};
  CHECK(runtime::relu_backward(x, dy) == Tensor{{4}, {0, 0, 1, 1}});
  const Tensor g{{2, 2}, {1, 2, 3, 4}};
  CHECK(runtime::causal_mask_backward(g) == Tensor{{2, 2}, {1, 0, 3, 4}});
  CHECK(runtime::causal_mask_backward(g, 0, 2) == Tensor{{2, 2}, {0, 0, 0, 0}});
  // add: a [2, 1] against b [3]: da sums over the columns, db over the rows.
  const auto sums = runtime::add_backward({2, 1}, {3}, Tensor{{2, 3}, {1, 2, 3, 4, 5, 6}});
  CHECK(sums.a == Tensor{{2, 1}, {6, 15}});
  CHECK(sums.b == Tensor{{3}, {5, 7, 9}});
  // Embedding rows 2..3 of the vocabulary: id 2 twice accumulates, id 0 falls outside.
  const Tensor rows = runtime::embedding_backward(Tensor{{3}, {2, 0, 2}}, {2, 1}, 2, Tensor{{3, 1}, {1, 10, 100}});
  CHECK(rows == Tensor{{2, 1}, {101, 0}});
  // split: part 1 of 2 along dim 0 goes back into the second half.
  CHECK(runtime::split_backward(Tensor{{1, 2}, {7, 8}}, {2, 2}, 0, 2, 1) == Tensor{{2, 2}, {0, 0, 7, 8}});
}

TEST_CASE("backward_ShapeMismatchesThrow") {
  const Tensor x{{2, 3}, std::vector<float>(6, 1.0f)};
  const Tensor w{{4, 3}, std::vector<float>(12, 1.0f)};
  CHECK_THROWS_AS(runtime::linear_backward(x, w, true, Tensor{{2, 3}, std::vector<float>(6)}), std::invalid_argument);
  const Tensor b{{3, 4}, std::vector<float>(12, 1.0f)};
  CHECK_THROWS_AS(runtime::matmul_backward(x, b, Tensor{{2, 3}, std::vector<float>(6)}), std::invalid_argument);
  CHECK_THROWS_AS(runtime::sum_to_shape(x, {4}), std::invalid_argument);
  CHECK_THROWS_AS(runtime::split_backward(x, {2, 6}, 1, 4, 0), std::invalid_argument);
  CHECK_THROWS_AS(runtime::permute_backward(x, {0, 0}), std::invalid_argument);
}
