#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "ir/gpt2.hpp"
#include "ir/models.hpp"
#include "runtime/init.hpp"
#include "runtime/reference.hpp"

using namespace shardsynth;
using runtime::Tensor;

namespace {

// The tiny GPT-2 of these tests: 1 layer, 2 heads, width 16, seq 4, batch 2, vocab 32.
ir::Graph tiny_gpt2() {
  ir::Gpt2Config c;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_embd = 16;
  c.seq = 4;
  c.batch = 2;
  c.vocab = 32;
  c.n_positions = 8;
  return ir::build_gpt2(c);
}

// x[rows, in] . W[out, in]^T + b, by loops.
std::vector<float> dense(const std::vector<float>& x, const Tensor& w, const Tensor& b, int64_t rows) {
  const int64_t out = w.shape[0], in = w.shape[1];
  std::vector<float> y(rows * out);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = b.data[o];
      for (int64_t i = 0; i < in; ++i) acc += static_cast<double>(x[r * in + i]) * w.data[o * in + i];
      y[r * out + o] = static_cast<float>(acc);
    }
  }
  return y;
}

}  // namespace

TEST_CASE("init_param_DeterministicAndInRange") {
  const Tensor a = runtime::init_param("fc1.weight", {4, 8}, 7);
  CHECK(a == runtime::init_param("fc1.weight", {4, 8}, 7));
  CHECK(a != runtime::init_param("fc2.weight", {4, 8}, 7));
  CHECK(a != runtime::init_param("fc1.weight", {4, 8}, 8));
  // Values depend on the flat index only, not on the shape.
  CHECK(runtime::init_param("fc1.weight", {32}, 7).data == a.data);
  for (float v : a.data) {
    CHECK(v >= -runtime::kParamRange);
    CHECK(v < runtime::kParamRange);
  }
}

TEST_CASE("init_input_IdsAndPositions") {
  const ir::Graph g = tiny_gpt2();
  const ir::Node& ids = g.node(*g.find("input_ids"));
  const ir::Node& positions = g.node(*g.find("position_ids"));
  const Tensor t = runtime::init_input(ids, 3, 32);
  CHECK(t.shape == std::vector<int64_t>{2, 4});
  for (float v : t.data) {
    CHECK(v == std::floor(v));
    CHECK(v >= 0);
    CHECK(v < 32);
  }
  CHECK(runtime::init_input(positions, 3, 8).data == std::vector<float>{0, 1, 2, 3});
  CHECK_THROWS_AS(runtime::init_input(ids, 3, 0), std::invalid_argument);
}

TEST_CASE("run_reference_MlpMatchesHandRolled") {
  const ir::Graph g = ir::build_mlp({1, 2, 4, 8, ir::DType::float32});
  const uint64_t seed = 11;
  const auto out = runtime::run_reference(g, seed);
  const Tensor x = runtime::init_input(g.node(*g.find("x")), seed, runtime::kMaxExactId);
  const Tensor w1 = runtime::init_param("fc1.weight", {8, 4}, seed), b1 = runtime::init_param("fc1.bias", {8}, seed);
  const Tensor w2 = runtime::init_param("fc2.weight", {4, 8}, seed), b2 = runtime::init_param("fc2.bias", {4}, seed);
  std::vector<float> h = dense(x.data, w1, b1, 2);
  for (float& v : h) v = 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f)));
  const std::vector<float> y = dense(h, w2, b2, 2);
  REQUIRE(out.count("output"));
  const Tensor& got = out.at("output");
  CHECK(got.shape == std::vector<int64_t>{1, 2, 4});
  REQUIRE(got.data.size() == y.size());
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(got.data[i] == doctest::Approx(y[i]).epsilon(1e-5));
  CHECK(out.at("x") == x);
  CHECK(out.at("fc2") == got);
}

TEST_CASE("run_reference_Gpt2FiniteAndDeterministic") {
  const ir::Graph g = tiny_gpt2();
  const auto a = runtime::run_reference(g, 5);
  const auto b = runtime::run_reference(g, 5);
  const Tensor& logits = a.at("output");
  CHECK(logits.shape == std::vector<int64_t>{2, 4, 32});
  for (float v : logits.data) CHECK(std::isfinite(v));
  CHECK(logits == b.at("output"));
  // Every node's shape matches the graph's declared type.
  for (ir::Vertex v : g.topological_order()) {
    const ir::Node& node = g.node(v);
    CHECK_MESSAGE(a.at(node.name).shape == node.type.shape, node.name);
  }
}

TEST_CASE("run_reference_Gpt2AttentionIsCausal") {
  const ir::Graph g = tiny_gpt2();
  const uint64_t seed = 5;
  const auto base = runtime::run_reference(g, seed);
  Tensor ids = base.at("input_ids");
  for (int64_t b = 0; b < 2; ++b) ids.data[b * 4 + 3] = static_cast<float>((static_cast<int64_t>(ids.data[b * 4 + 3]) + 7) % 32);
  const auto changed = runtime::run_reference(g, seed, {{"input_ids", ids}});
  const Tensor& x = base.at("output");
  const Tensor& y = changed.at("output");
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t t = 0; t < 4; ++t) {
      bool same = true;
      for (int64_t v = 0; v < 32; ++v) same = same && x.data[(b * 4 + t) * 32 + v] == y.data[(b * 4 + t) * 32 + v];
      CHECK_MESSAGE(same == (t < 3), "batch " << b << " position " << t);
    }
  }
}

TEST_CASE("run_reference_UnknownKindThrows") {
  ir::Graph g;
  g.add_node(ir::placeholder("x", {{2}, ir::DType::float32}));
  g.add_node(ir::Node{"weird", "frobnicate", "", {{2}, ir::DType::float32}, {}, {}}, {"x"});
  try {
    runtime::run_reference(g, 1);
    FAIL("expected std::invalid_argument");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("weird") != std::string::npos);
    CHECK(what.find("frobnicate") != std::string::npos);
  }
}

TEST_CASE("run_reference_TiedLmHeadUsesWte") {
  // lm_head has no bias and shares wte.weight: logits = ln_f . wte^T.
  const ir::Graph g = tiny_gpt2();
  const auto out = runtime::run_reference(g, 9);
  const Tensor wte = runtime::init_param("wte.weight", {32, 16}, 9);
  const Tensor no_bias = runtime::zeros({32});
  const std::vector<float> want = dense(out.at("ln_f").data, wte, no_bias, 8);
  const Tensor& logits = out.at("lm_head");
  REQUIRE(logits.data.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(logits.data[i] == doctest::Approx(want[i]).epsilon(1e-4));
  // wte's lookup rows are the same table.
  const Tensor& ids = out.at("input_ids");
  const Tensor& tokens = out.at("wte");
  for (int64_t d = 0; d < 16; ++d) CHECK(tokens.data[d] == wte.data[static_cast<int64_t>(ids.data[0]) * 16 + d]);
}

TEST_CASE("run_reference_GivenParamsOverrideSeeded") {
  // A given fc2.bias (by full name) replaces the seeded one; the rest stay seeded.
  const ir::Graph g = ir::build_mlp({1, 2, 4, 8, ir::DType::float32});
  const auto seeded = runtime::run_reference(g, 3);
  const Tensor b2 = runtime::init_param("fc2.bias", {4}, 3);
  Tensor shifted = b2;
  for (float& v : shifted.data) v += 1.0f;
  const auto given = runtime::run_reference(g, 3, {}, {{"fc2.bias", shifted}});
  CHECK(given.at("fc1") == seeded.at("fc1"));
  const Tensor& a = seeded.at("output");
  const Tensor& b = given.at("output");
  REQUIRE(a.data.size() == b.data.size());
  for (std::size_t i = 0; i < a.data.size(); ++i) CHECK(b.data[i] == doctest::Approx(a.data[i] + 1.0f));
  // A tied parameter is found under its tied-to name.
  const ir::Graph gpt = tiny_gpt2();
  const auto with_zero_wte = runtime::run_reference(gpt, 9, {}, {{"wte.weight", runtime::zeros({32, 16})}});
  for (float v : with_zero_wte.at("lm_head").data) CHECK(v == 0.0f);
}

TEST_CASE("run_reference_outputs_KeepsOnlyTheOutputsAndTheirValues") {
  const ir::Graph gpt = tiny_gpt2();
  const auto all = runtime::run_reference(gpt, 4);
  const auto outputs = runtime::run_reference_outputs(gpt, 4);
  REQUIRE(outputs.size() == 1);
  CHECK(outputs.begin()->first == "output");
  CHECK(outputs.at("output") == all.at("output"));
  CHECK(all.size() > 30);
}
