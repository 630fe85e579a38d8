// The backward table (runtime/backward.hpp) against PyTorch autograd:
// tests/runtime/backward_torch.py (run with the project's .venv/ Python,
// SHARDSYNTH_PYTHON_EXE) reads the same random operands and output gradients from a
// safetensors file and writes torch's float64 gradients back, for linear,
// layernorm, softmax, gelu_tanh, matmul (batch broadcast) and embedding (a
// vocab shard at a nonzero offset, compared with torch's rows of it).
// Without torch the test prints "backward_torch: SKIPPED" and ctest counts
// it skipped (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "e2e/run_command.hpp"
#include "ir/graph.hpp"
#include "runtime/backward.hpp"
#include "runtime/reference.hpp"
#include "runtime/safetensors.hpp"

using namespace shardsynth;
using runtime::Tensor;

namespace {

const std::string kPython = SHARDSYNTH_PYTHON_EXE;  // the project's .venv (scripts/bootstrap)
const std::string kScript = std::string(SHARDSYNTH_RUNTIME_TESTS_DIR) + "/backward_torch.py";

Tensor random_tensor(std::mt19937& gen, std::vector<int64_t> shape, float lo = -1.0f, float hi = 1.0f) {
  Tensor t = runtime::zeros(std::move(shape));
  std::uniform_real_distribution<float> u(lo, hi);
  for (float& v : t.data) v = u(gen);
  return t;
}

// Runs the backward entry of `kind` on operands `inputs` and params `params`
// (forward first, for the output), with output gradient `dy`.
runtime::Gradients backward(const std::string& kind, const std::vector<const Tensor*>& inputs,
                            const std::map<std::string, const Tensor*>& params, const Tensor& dy,
                            std::vector<int64_t> weight_offsets = {}) {
  const ir::Node node{"n", kind, "", {}, {}, {}, {}};
  const runtime::KernelCall call{node, inputs, params, {}, {}, std::move(weight_offsets)};
  const Tensor out = runtime::reference_kernels().at(kind)(call);
  REQUIRE(out.shape == dy.shape);
  return runtime::reference_backward_kernels().at(kind)(runtime::BackwardCall{call, out, dy});
}

void check_close(const std::string& what, const Tensor& got, const Tensor& want) {
  CAPTURE(what);
  REQUIRE(got.shape == want.shape);
  for (std::size_t i = 0; i < got.data.size(); ++i) {
    CAPTURE(i);
    CHECK(got.data[i] == doctest::Approx(want.data[i]).epsilon(1e-4).scale(1e-2));
  }
}

}  // namespace

TEST_CASE("backward_torch_GradientsMatchAutograd") {
  if (testing::run_command(kPython + " -c 'import torch'").exit_code != 0) {
    std::cout << "backward_torch: SKIPPED: " << kPython << " cannot import torch (scripts/bootstrap installs it)\n";
    return;
  }
  std::mt19937 gen(7);
  std::map<std::string, Tensor> in;
  in["linear.x"] = random_tensor(gen, {2, 3, 4});
  in["linear.weight"] = random_tensor(gen, {5, 4});
  in["linear.bias"] = random_tensor(gen, {5});
  in["linear.dy"] = random_tensor(gen, {2, 3, 5});
  in["layernorm.x"] = random_tensor(gen, {3, 8}, -3.0f, 3.0f);
  in["layernorm.weight"] = random_tensor(gen, {8}, 0.5f, 1.5f);
  in["layernorm.bias"] = random_tensor(gen, {8});
  in["layernorm.dy"] = random_tensor(gen, {3, 8});
  in["softmax.x"] = random_tensor(gen, {2, 3, 6}, -4.0f, 4.0f);
  in["softmax.dy"] = random_tensor(gen, {2, 3, 6});
  in["gelu_tanh.x"] = random_tensor(gen, {4, 5}, -4.0f, 4.0f);
  in["gelu_tanh.dy"] = random_tensor(gen, {4, 5});
  in["matmul.a"] = random_tensor(gen, {2, 1, 3, 4});  // batch [2, 1] against [3]: both broadcast
  in["matmul.b"] = random_tensor(gen, {3, 4, 2});
  in["matmul.dy"] = random_tensor(gen, {2, 3, 3, 2});
  in["embedding.ids"] = Tensor{{2, 4}, {0, 3, 6, 7, 4, 3, 9, 5}};
  in["embedding.weight"] = random_tensor(gen, {10, 3});
  in["embedding.dy"] = random_tensor(gen, {2, 4, 3});

  const auto dir = testing::scratch_dir("backward_torch");
  runtime::write_safetensors((dir / "in.safetensors").string(), in);
  const auto r = testing::run_command(kPython + " " + kScript + " " + (dir / "in.safetensors").string() + " " +
                                      (dir / "out.safetensors").string());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto torch = runtime::read_safetensors((dir / "out.safetensors").string());
  std::filesystem::remove_all(dir);

  const auto linear = backward("linear", {&in["linear.x"]}, {{"weight", &in["linear.weight"]}, {"bias", &in["linear.bias"]}},
                               in["linear.dy"]);
  check_close("linear dx", *linear.inputs.at(0), torch.at("linear.dx"));
  check_close("linear dweight", linear.params.at("weight"), torch.at("linear.dweight"));
  check_close("linear dbias", linear.params.at("bias"), torch.at("linear.dbias"));

  const auto norm = backward("layernorm", {&in["layernorm.x"]},
                             {{"weight", &in["layernorm.weight"]}, {"bias", &in["layernorm.bias"]}}, in["layernorm.dy"]);
  check_close("layernorm dx", *norm.inputs.at(0), torch.at("layernorm.dx"));
  check_close("layernorm dweight", norm.params.at("weight"), torch.at("layernorm.dweight"));
  check_close("layernorm dbias", norm.params.at("bias"), torch.at("layernorm.dbias"));

  const auto soft = backward("softmax", {&in["softmax.x"]}, {}, in["softmax.dy"]);
  check_close("softmax dx", *soft.inputs.at(0), torch.at("softmax.dx"));

  const auto act = backward("gelu_tanh", {&in["gelu_tanh.x"]}, {}, in["gelu_tanh.dy"]);
  check_close("gelu_tanh dx", *act.inputs.at(0), torch.at("gelu_tanh.dx"));

  const auto mm = backward("matmul", {&in["matmul.a"], &in["matmul.b"]}, {}, in["matmul.dy"]);
  check_close("matmul da", *mm.inputs.at(0), torch.at("matmul.da"));
  check_close("matmul db", *mm.inputs.at(1), torch.at("matmul.db"));

  // The vocab shard holding rows 3..6 of the 10-row table: its gradient is those rows of torch's.
  const auto& table = in["embedding.weight"].data;
  const Tensor rows{{4, 3}, std::vector<float>(table.begin() + 9, table.begin() + 21)};
  const auto emb = backward("embedding", {&in["embedding.ids"]}, {{"weight", &rows}}, in["embedding.dy"], {3, 0});
  CHECK_FALSE(emb.inputs.at(0).has_value());
  const Tensor& full = torch.at("embedding.dweight");
  check_close("embedding dweight rows 3..6", emb.params.at("weight"),
              Tensor{{4, 3}, std::vector<float>(full.data.begin() + 9, full.data.begin() + 21)});
}
