// Mixed precision in the memory model: bf16 training with fp32 master weights
// gives exactly the ZeRO paper's per-device bytes (Rajbhandari et al., 2020,
// section 3.1 and figure 1: 2 Psi parameters, 2 Psi gradients and K Psi of
// optimizer state with K = 12 for Adam's fp32 master copy, momentum and
// variance), for every storage choice on 8 devices:
//   data-parallel  2 + 2 + 12 Psi
//   zero1          2 + 2 + 12 Psi / 8
//   zero2          2 + (2 + 12) Psi / 8
//   fsdp           (2 + 2 + 12) Psi / 8
// for GPT-2 xl and Llama 3 8B; and the policy's other choices (reduce in
// fp32, the bad policies) as the cost and memory model read them.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "costs/param_storage.hpp"
#include "costs/precision.hpp"
#include "ir/error.hpp"
#include "ir/gpt2.hpp"
#include "ir/llama.hpp"
#include "ir/mesh.hpp"
#include "synth/lowering.hpp"
#include "synth/memory_figures.hpp"
#include "synth/plans.hpp"
#include "synth/report/memory_report.hpp"
#include "synth/synthesizer.hpp"

namespace shardsynth::synth {
namespace {

// Untied parameter elements (Psi).
int64_t parameter_count(const ir::Graph& graph) {
  int64_t psi = 0;
  for (ir::Vertex v : graph.topological_order()) {
    for (const auto& p : graph.node(v).params) {
      if (p.tied_to.empty()) psi += ir::num_elements(p.type.shape);
    }
  }
  return psi;
}

struct Want {
  const char* plan;                  // --plan
  int64_t params, grads, optimizer;  // bytes per device
  std::vector<int64_t> zero_stages;  // parameter elements per ZeRO stage
};

std::vector<Want> zero_paper(int64_t psi) {
  return {{"data-parallel", 2 * psi, 2 * psi, 12 * psi, {psi, 0, 0, 0}},
          {"zero1", 2 * psi, 2 * psi, 12 * psi / 8, {0, psi, 0, 0}},
          {"zero2", 2 * psi, 2 * psi / 8, 12 * psi / 8, {0, 0, psi, 0}},
          {"fsdp", 2 * psi / 8, 2 * psi / 8, 12 * psi / 8, {0, 0, 0, psi}}};
}

void check_zero_paper(const ir::Graph& graph, int64_t want_psi) {
  const ir::Mesh mesh = ir::parse_mesh("8");
  const auto model = costs::make_cost_model("alpha-beta");
  const int64_t psi = parameter_count(graph);
  REQUIRE(psi == want_psi);
  REQUIRE(psi % 8 == 0);
  for (const Want& want : zero_paper(psi)) {
    CAPTURE(want.plan);
    SynthOptions options;
    options.lower.mode = costs::Mode::training;
    options.lower.allow = plan_filter(want.plan, graph, mesh);
    const SynthResult result = synthesize(graph, mesh, *model, options);
    const ir::ScheduleMemory m = memory_figures(result.lowered, result.search.best);
    CHECK(m.params == want.params);
    CHECK(m.grads == want.grads);
    CHECK(m.optimizer == want.optimizer);
    CHECK(m.zero_stages == want.zero_stages);
    CHECK(m.peak == m.params + m.grads + m.optimizer + m.activations + m.transient);
    const std::string report = memory_report_text(m, mesh, costs::Mode::training,
                                                  costs::policy_text(options.lower.precision, graph));
    CHECK(report.find("precision: bfloat16 params, gradients reduced in bfloat16, master weights and Adam in float32") !=
          std::string::npos);
  }
}

}  // namespace

TEST_CASE("memory_figures_Gpt2XlBf16AsInTheZeroPaper") {
  ir::Gpt2Config config = ir::gpt2_preset("xl");
  config.dtype = ir::DType::bfloat16;
  check_zero_paper(ir::build_gpt2(config), 1557611200);
}

TEST_CASE("memory_figures_Llama3_8bBf16AsInTheZeroPaper") {
  ir::LlamaConfig config = ir::llama_preset("llama-3-8b");
  config.dtype = ir::DType::bfloat16;
  check_zero_paper(ir::build_llama(config), 8030261248);
}

TEST_CASE("storage_bytes_FollowThePolicy") {
  const ir::Mesh mesh = ir::parse_mesh("8");
  const ir::TensorType bf16{{64, 32}, ir::DType::bfloat16};
  const ir::TensorType fp32{{64, 32}, ir::DType::float32};
  const ir::Spec whole = ir::replicated(2);
  const ir::Spec rows{{{0}, {}}, {}};
  const costs::ParamStorage zero2{whole, rows, rows};
  const int64_t n = 64 * 32;
  // Default policy: reduce in the parameter's dtype, fp32 master and moments.
  const auto mixed = costs::storage_bytes(bf16, zero2, mesh);
  CHECK(mixed.param == 2 * n);
  CHECK(mixed.grad == 2 * n / 8);
  CHECK(mixed.state == 12 * n / 8);
  const auto single = costs::storage_bytes(fp32, zero2, mesh);
  CHECK(single.param == 4 * n);
  CHECK(single.grad == 4 * n / 8);
  CHECK(single.state == 8 * n / 8);  // no master copy: the parameter is one
  // Gradients reduced and kept in fp32 (torchtitan's default reduce dtype).
  costs::PrecisionPolicy wide;
  wide.reduce = ir::DType::float32;
  CHECK(costs::storage_bytes(bf16, zero2, mesh, wide).grad == 4 * n / 8);
  CHECK(costs::param_bytes(costs::Mode::training, bf16, whole, mesh) == (2 + 2 + 12) * n);
  CHECK(costs::param_bytes(costs::Mode::training, bf16, whole, mesh, wide) == (2 + 4 + 12) * n);
  CHECK(costs::param_bytes(costs::Mode::inference, bf16, whole, mesh) == 2 * n);
}

TEST_CASE("storage_cost_ReducesInTheReduceDtype") {
  const ir::Mesh mesh = ir::parse_mesh("8");
  const auto model = costs::make_cost_model("alpha-beta");
  const ir::Spec whole = ir::replicated(2);
  const costs::OperandUse use{{{1024, 1024}, ir::DType::bfloat16}, whole, {0}};
  const costs::ParamStorage ddp{whole, whole, whole};
  // Plain data parallelism: the gradient's all-reduce is the whole cost.
  const auto narrow = costs::storage_cost(*model, ddp, use, mesh);
  costs::PrecisionPolicy wide;
  wide.reduce = ir::DType::float32;
  const auto fp32 = costs::storage_cost(*model, ddp, use, mesh, wide);
  const auto all_reduce = [&](ir::DType dtype) {
    return model->reshard_cost({{1024, 1024}, dtype}, ir::Spec{{{}, {}}, {0}}, whole, mesh);
  };
  REQUIRE(narrow.has_value());
  REQUIRE(fp32.has_value());
  CHECK(*narrow == *all_reduce(ir::DType::bfloat16));
  CHECK(*fp32 == *all_reduce(ir::DType::float32));
  CHECK(*fp32 > *narrow);
}

TEST_CASE("check_policy_RefusesNarrowReductionAndUnscaledFp16") {
  ir::Gpt2Config config = ir::gpt2_preset("small");
  config.n_layer = 1;
  config.dtype = ir::DType::float32;
  const ir::Graph fp32 = ir::build_gpt2(config);
  config.dtype = ir::DType::float16;
  const ir::Graph fp16 = ir::build_gpt2(config);
  costs::PrecisionPolicy policy;
  CHECK_NOTHROW(costs::check_policy(policy, fp32, true));
  CHECK_NOTHROW(costs::check_policy(policy, fp16, true));
  policy.reduce = ir::DType::bfloat16;
  CHECK_THROWS_WITH_AS(costs::check_policy(policy, fp32, true),
                       doctest::Contains("reduce dtype bfloat16 is narrower than the compute dtype float32"),
                       ir::InputError);
  policy.reduce.reset();
  policy.master = ir::DType::bfloat16;
  CHECK_THROWS_WITH_AS(costs::check_policy(policy, fp32, false),
                       doctest::Contains("master dtype bfloat16 is narrower"), ir::InputError);
  policy.master = ir::DType::float32;
  policy.loss_scaling = false;
  CHECK_THROWS_WITH_AS(costs::check_policy(policy, fp16, true),
                       doctest::Contains("float16 training without loss scaling"), ir::InputError);
  CHECK_NOTHROW(costs::check_policy(policy, fp16, false));  // inference needs no loss scale
  CHECK(costs::policy_text(policy, fp32).empty());
}

}  // namespace shardsynth::synth
