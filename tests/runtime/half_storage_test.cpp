// 16-bit tensors on CPU ranks as 16-bit storage (runtime/tensor.hpp,
// runtime/half.hpp, runtime/fp32_operands.hpp): a bfloat16/float16 tensor
// holds 2 bytes an element and no fp32 copy; layout keeps the patterns
// exactly; kernels read the operands widened, accumulate in fp32 and the
// result is rounded once; a training step holds its 16-bit parameters,
// activations and gradients in 16 bits, as the memory ledger measures.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "ir/op_table.hpp"
#include "ir/schedule.hpp"
#include "runtime/backward.hpp"
#include "runtime/forward_pass.hpp"
#include "runtime/half.hpp"
#include "runtime/loss.hpp"
#include "runtime/reference.hpp"
#include "runtime/solo_communicator.hpp"
#include "runtime/training_state.hpp"

using namespace shardsynth;
using namespace shardsynth::runtime;

namespace {

constexpr ir::DType kBf16 = ir::DType::bfloat16;
constexpr ir::DType kFp16 = ir::DType::float16;

// A [rows, cols] tensor of distinct values (not all representable in 16 bits).
Tensor sample(int64_t rows, int64_t cols) {
  Tensor t = zeros({rows, cols});
  for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = 0.1f * static_cast<float>(i) - 1.7f;
  return t;
}

ir::Graph bf16_mlp() {
  ir::MlpConfig c;
  c.batch = 2;
  c.seq = 4;
  c.hidden = 8;
  c.ffn = 16;
  c.dtype = kBf16;
  return ir::build_mlp(c);
}

// Whether `t` is held as 16-bit patterns of `dtype` only, one per element.
bool sixteen_bit(const Tensor& t, ir::DType dtype) {
  return t.dtype == dtype && t.data.empty() && t.bits.size() == static_cast<std::size_t>(t.numel()) &&
         held_bytes(t) == 2 * t.numel();
}

}  // namespace

TEST_CASE("half_storage_TwoBytesAnElementAndNoFp32Copy") {
  const Tensor t = sample(3, 4);
  CHECK(held_bytes(t) == 4 * 12);
  for (ir::DType dtype : {kBf16, kFp16}) {
    CAPTURE(ir::dtype_name(dtype));
    const Tensor h = rounded(t, dtype);
    CHECK(sixteen_bit(h, dtype));
    for (std::size_t i = 0; i < 12; ++i) CHECK(h.bits[i] == half_bits(t.data[i], dtype));
    CHECK(sixteen_bit(zeros({5, 2}, dtype), dtype));
    // Back to fp32: exact, and the 16-bit storage is gone.
    const Tensor wide = widened(h);
    CHECK(wide.dtype == ir::DType::float32);
    CHECK(wide.bits.empty());
    for (std::size_t i = 0; i < 12; ++i) CHECK(wide.data[i] == round_to(t.data[i], dtype));
    CHECK(rounded(wide, dtype) == h);  // a value of the dtype rounds to itself
  }
  Tensor ids = zeros({4});
  ids.dtype = ir::DType::int64;
  CHECK(held_bytes(ids) == 4 * 8);  // ids count as the model counts them
}

TEST_CASE("half_storage_LayoutAndCastsKeepThePatterns") {
  const Tensor h = rounded(sample(4, 6), kBf16);
  // Slicing and concatenating move 16-bit patterns, never through fp32 storage.
  std::vector<Tensor> parts;
  for (int64_t j = 0; j < 3; ++j) {
    parts.push_back(slice_part(h, 1, 3, j, 1));
    CHECK(sixteen_bit(parts.back(), kBf16));
  }
  CHECK(concat_parts(parts, 1) == h);
  CHECK(slice_part(h, 0, 2, 1).bits == std::vector<uint16_t>(h.bits.begin() + 12, h.bits.end()));
  // bfloat16 to float16 goes through the exact value and rounds once.
  const Tensor f = rounded(h, kFp16);
  CHECK(sixteen_bit(f, kFp16));
  for (std::size_t i = 0; i < h.bits.size(); ++i) CHECK(f.bits[i] == half_bits(element(h, i), kFp16));
  // A tensor labelled 16-bit without its 16-bit storage is a bug, not a value.
  Tensor broken = sample(1, 2);
  broken.dtype = kBf16;
  CHECK_THROWS_AS(round_in_place(broken, ir::DType::float32), std::logic_error);
}

TEST_CASE("half_storage_KernelsAccumulateInFp32AndTheResultRoundsOnce") {
  // x = [1, 2^-8 x 256] . ones: 1 + 2^-8 is a bfloat16 tie that rounds back
  // to 1, so a sum kept in bfloat16 would stay 1; accumulated in fp32 it is 2.
  const int64_t k = 257;
  Tensor x = zeros({1, k});
  x.data.assign(static_cast<std::size_t>(k), std::ldexp(1.0f, -8));
  x.data[0] = 1.0f;
  Tensor w = zeros({1, k});
  w.data.assign(static_cast<std::size_t>(k), 1.0f);
  const Tensor hx = rounded(x, kBf16), hw = rounded(w, kBf16);
  REQUIRE(sixteen_bit(hx, kBf16));
  ir::Node node;
  node.name = "proj";
  node.kind = "linear";
  KernelCall call{node, {&hx}, {{"weight", &hw}}, {}, {}, {}};
  const Tensor out = reference_kernels().at("linear")(call);
  CHECK(out.dtype == ir::DType::float32);  // the kernel's fp32 result, before the store rounds it
  REQUIRE(out.data.size() == 1);
  CHECK(out.data[0] == 2.0f);
  CHECK(rounded(out, kBf16).bits[0] == half_bits(2.0f, kBf16));
  // Gradient accumulation into a 16-bit buffer: each sum in fp32, rounded once.
  Tensor into = rounded(sample(1, 4), kBf16);
  const Tensor more = rounded(sample(1, 4), kBf16);
  const Tensor before = into;
  accumulate(into, more);
  CHECK(sixteen_bit(into, kBf16));
  for (std::size_t i = 0; i < 4; ++i) CHECK(into.bits[i] == half_bits(element(before, i) + element(more, i), kBf16));
}

// Whether `a` and `b` agree to fp32 summation order: within 1e-6 of b's largest magnitude.
bool same_sums(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  float diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff <= 1e-6f * scale;
}

// linear's and conv1d's weights are read by tiles of the output's columns
// (cpu_gemm_weight): a 16-bit weight of several tiles, forward and
// backward, gives what the same kernel gives on the weight widened whole,
// but for the order OpenBLAS sums a tile's dot products in (the backward's
// dx differs in the last bits; a wrong tile offset would not be close).
TEST_CASE("half_storage_WeightTilesGiveTheWholeWeightsResults") {
  // [700, 200]: the forward's 700 output columns come in tiles of 320 (64K
  // elements / 200, down to a multiple of 64), the backward's 200 in tiles of 64.
  const int64_t k = 200, n = 700, rows = 37;
  REQUIRE(widen_tile(rounded(sample(n, k), kBf16), n, k) == 320);
  for (const char* kind : {"linear", "conv1d"}) {
    CAPTURE(kind);
    const bool out_in = std::string(kind) == "linear";
    const Tensor w = rounded(out_in ? sample(n, k) : sample(k, n), kBf16);
    const Tensor wide = widened(w);
    const Tensor x = rounded(sample(rows, k), kBf16);
    ir::Node node;
    node.name = "proj";
    node.kind = kind;
    const KernelCall tiled{node, {&x}, {{"weight", &w}}, {}, {}, {}};
    const KernelCall whole{node, {&x}, {{"weight", &wide}}, {}, {}, {}};
    const Tensor out = reference_kernels().at(kind)(tiled);
    CHECK(same_sums(out.data, reference_kernels().at(kind)(whole).data));
    const Tensor dy = sample(rows, n);
    const Gradients g = reference_backward_kernels().at(kind)({tiled, out, dy});
    const Gradients want = reference_backward_kernels().at(kind)({whole, out, dy});
    REQUIRE(g.inputs.at(0));
    CHECK(same_sums(g.inputs[0]->data, want.inputs[0]->data));
    CHECK(g.params.at("weight").data == want.params.at("weight").data);  // dW reads no weight: the same GEMM
  }
}

TEST_CASE("half_storage_ATrainingStepHoldsSixteenBitTensors") {
  const ir::Graph graph = bf16_mlp();
  const ir::Mesh mesh = ir::parse_mesh("1");
  SoloCommunicator comm;
  TrainSetup setup;
  const PlanSpecs plan = replicated_plan(graph);
  TrainingState state(graph, mesh, plan, comm, setup);
  // The ledger measures fc1's weight as held: 2 bytes an element, not 4.
  const int64_t n = static_cast<int64_t>(graph.size());
  const int64_t weight_bytes = 16 * 8 * 2;
  state.track_memory({{"fc1.weight", ir::MemoryCategory::param, weight_bytes, {{0, 2 * n + 1}}}});
  state.begin_step();
  const auto pass = state.forward(&setup.inputs, nullptr);
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    if (node.kind == ir::kPlaceholder || node.type.dtype != kBf16) continue;
    CAPTURE(node.name);
    CHECK(sixteen_bit(pass->value(node.name), kBf16));  // every activation held in 16 bits
    if (const SavedOp* saved = pass->saved(node.name)) CHECK(sixteen_bit(saved->output, kBf16));
  }
  const LossChoice loss = choose_loss(graph);
  std::map<std::string, Tensor> grads;
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    if (node.kind == ir::kOutput) state.take_loss(*pass, node.name, loss, nullptr, 1, 1.0, grads);
  }
  for (const auto& [name, grad] : grads) CHECK(sixteen_bit(grad, kBf16));
  state.backward(*pass, std::move(grads));
  state.end_step();
  REQUIRE(state.memory());
  CHECK(state.memory()->at_peak.params == weight_bytes);
  // The updated parameters are the fp32 masters' values rounded back into 16 bits.
  const auto params = state.whole_params();
  REQUIRE(params.count("fc1.weight"));
  CHECK(params.at("fc1.weight").dtype == ir::DType::float32);  // the master
}
