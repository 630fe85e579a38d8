// The alpha-beta cost model: ring factors against nccl-tests' bus-bandwidth
// factors, collective prices in exact nanoseconds on 1-D and 2-D meshes,
// resharding as the sum of its planned steps, link overrides, compute, and
// reachability of every resharding between the specs of a small tensor.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "costs/alpha_beta_cost_model.hpp"
#include "costs/collective.hpp"
#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/mesh.hpp"
#include "ir/op_sharding.hpp"
#include "ir/sharding_rule.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::costs {
namespace {

using K = CollectiveKind;

// float32 [8, 1024, 1024]: M = 32 MiB.
const ir::TensorType kTensor{{8, 1024, 1024}, ir::DType::float32};
constexpr double kM = 8.0 * 1024 * 1024 * 4;

int64_t price(const Collective& step, const std::string& before, const ir::Mesh& mesh) {
  const AlphaBetaCostModel model;
  return model.collective_cost(step, kTensor, ir::parse_spec(before, mesh.rank()), mesh);
}

std::optional<int64_t> reshard(const std::string& from, const std::string& to, const ir::Mesh& mesh,
                               const ir::TensorType& type = kTensor) {
  const AlphaBetaCostModel model;
  return model.reshard_cost(type, ir::parse_spec(from, mesh.rank()), ir::parse_spec(to, mesh.rank()), mesh);
}

// The message of the ir::InputError `f` throws; empty when it throws nothing.
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const ir::InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("ring_bytes_MatchesNcclTestsBusBandwidthFactors") {
  // nccl-tests doc/PERFORMANCE.md: busBw = algBw * factor with algBw = S / t,
  // i.e. each rank moves factor * S bytes over its link.
  const double s = 1000.0;  // S: the per-rank buffer nccl-tests measures
  for (int64_t n : {2, 4, 8}) {
    CAPTURE(n);
    const double k = static_cast<double>(n);
    // all-reduce: 2(n-1)/n.
    CHECK(ring_bytes(K::all_reduce, n, s) == doctest::Approx(2 * (k - 1) / k * s));
    // all-gather (S = the gathered buffer) and reduce-scatter (S = the input buffer): (n-1)/n.
    CHECK(ring_bytes(K::all_gather, n, s) == doctest::Approx((k - 1) / k * s));
    CHECK(ring_bytes(K::reduce_scatter, n, s) == doctest::Approx((k - 1) / k * s));
    // alltoall: (n-1)/n of one rank's buffer; ours takes M summed over the axis (n S) at (n-1)/n^2.
    CHECK(ring_bytes(K::all_to_all, n, k * s) == doctest::Approx((k - 1) / k * s));
    CHECK(ring_bytes(K::all_to_all, n, s) == doctest::Approx((k - 1) / (k * k) * s));
    CHECK(ring_bytes(K::slice, n, s) == 0.0);
  }
  // A single device sends nothing.
  for (K kind : {K::all_reduce, K::all_gather, K::reduce_scatter, K::all_to_all}) CHECK(ring_bytes(kind, 1, s) == 0.0);
}

TEST_CASE("ring_steps_RingStepCounts") {
  for (int64_t n : {2, 4, 8}) {
    CAPTURE(n);
    CHECK(ring_steps(K::all_reduce, n) == 2 * (n - 1));
    CHECK(ring_steps(K::all_gather, n) == n - 1);
    CHECK(ring_steps(K::reduce_scatter, n) == n - 1);
    CHECK(ring_steps(K::all_to_all, n) == n - 1);
    CHECK(ring_steps(K::slice, n) == 0);
  }
}

TEST_CASE("AlphaBetaCostModel_Presets") {
  const auto model = make_cost_model("alpha-beta");
  CHECK(model->name() == "alpha-beta");
  CHECK(model->unit() == "ns");
  CHECK_FALSE(model->resolves_partial_in_op());
  CHECK(model->shards_graph_inputs());
  CHECK_FALSE(model->replicated_outputs());
  const ir::SpecSpace space = model->spec_space(ir::parse_mesh("2x4"));
  CHECK(space.window == -1);
  CHECK_FALSE(space.require_sharded_reduction);
  CHECK(space.allow_blocks);
}

TEST_CASE("collective_cost_OneDimMeshExactNanoseconds") {
  // Mesh "8": 200 bytes/ns, 1000 ns per ring step.
  const ir::Mesh mesh = ir::parse_mesh("8");
  REQUIRE(kM == 33554432.0);
  // all_gather of RRS: local M/8, ring buffer M; 7 steps + 7/8 M / 200 = 7000 + 146800.64.
  CHECK(price({K::all_gather, 0, 2, -1}, "RRS", mesh) == 153801);
  CHECK(price({K::all_gather, 0, 0, -1}, "SRR", mesh) == 153801);
  // reduce_scatter of a partial sum: the local buffer is already whole.
  CHECK(price({K::reduce_scatter, 0, -1, 2}, "RRR+P", mesh) == 153801);
  // all_reduce: 14 steps + 2 * 7/8 M / 200 = 14000 + 293601.28.
  CHECK(price({K::all_reduce, 0, -1, -1}, "RRR+P", mesh) == 307601);
  // all_to_all: 7 steps + 7/64 M / 200 = 7000 + 18350.08.
  CHECK(price({K::all_to_all, 0, 2, 0}, "RRS", mesh) == 25350);
  CHECK(price({K::slice, 0, -1, 2}, "RRR", mesh) == 0);

  // The same through reshard_cost.
  CHECK(reshard("RRS", "RRR", mesh) == 153801);
  CHECK(reshard("RRR+P", "RRS", mesh) == 153801);
  CHECK(reshard("RRR+P", "RRR", mesh) == 307601);
  CHECK(reshard("RRS", "SRR", mesh) == 25350);
  CHECK(reshard("RRR", "RSR", mesh) == 0);
  CHECK(reshard("RRR", "RRR+P", mesh) == std::nullopt);

  // A smaller dtype halves the transfer term only: bf16 all_gather = 7000 + 73400.32.
  const AlphaBetaCostModel model;
  CHECK(model.collective_cost({K::all_gather, 0, 2, -1}, {{8, 1024, 1024}, ir::DType::bfloat16}, ir::parse_spec("RRS"),
                              mesh) == 80400);
}

TEST_CASE("collective_cost_TwoDimMeshBothAxes") {
  // Mesh "2x4": axis 0 has 2 devices at 25 bytes/ns and 5000 ns per step,
  // axis 1 has 4 devices at 200 bytes/ns and 1000 ns per step.
  const ir::Mesh mesh = ir::parse_mesh("2x4");
  REQUIRE(mesh.bandwidth_gbps == std::vector<double>{25, 200});
  REQUIRE(mesh.latency_us == std::vector<double>{5, 1});
  // Axis 0: all_gather of S0RR: 5000 + 1/2 M / 25 = 5000 + 671088.64.
  CHECK(price({K::all_gather, 0, 0, -1}, "S0RR", mesh) == 676089);
  // Axis 1: all_gather of RRS1: 3000 + 3/4 M / 200 = 3000 + 125829.12.
  CHECK(price({K::all_gather, 1, 2, -1}, "RRS1", mesh) == 128829);
  // Axis 1 on a tensor already split by axis 0: the ring buffer is M/2: 3000 + 62914.56.
  CHECK(price({K::all_gather, 1, 2, -1}, "S0RS1", mesh) == 65915);
  // all_reduce axis 0: 2 steps of 5000 + 2 * 1/2 M / 25 = 10000 + 1342177.28.
  CHECK(price({K::all_reduce, 0, -1, -1}, "RRR+P0", mesh) == 1352177);
  // all_reduce axis 1: 6000 + 2 * 3/4 M / 200 = 6000 + 251658.24.
  CHECK(price({K::all_reduce, 1, -1, -1}, "RRR+P1", mesh) == 257658);
  // reduce_scatter axis 0: 5000 + 671088.64; axis 1: 3000 + 125829.12.
  CHECK(price({K::reduce_scatter, 0, -1, 0}, "RRR+P0", mesh) == 676089);
  CHECK(price({K::reduce_scatter, 1, -1, 1}, "RRR+P1", mesh) == 128829);
  // all_to_all axis 0: 5000 + 1/4 M / 25 = 5000 + 335544.32; axis 1: 3000 + 3/16 M / 200 = 3000 + 31457.28.
  CHECK(price({K::all_to_all, 0, 0, 2}, "S0RR", mesh) == 340544);
  CHECK(price({K::all_to_all, 1, 0, 2}, "S1RR", mesh) == 34457);
  CHECK(price({K::slice, 0, -1, 0}, "RRR", mesh) == 0);
  CHECK(price({K::slice, 1, -1, 1}, "S0RR", mesh) == 0);
}

TEST_CASE("collective_cost_AxisOfExtentOneIsFree") {
  for (const char* text : {"1x8", "8x1", "1"}) {
    CAPTURE(text);
    const ir::Mesh mesh = ir::parse_mesh(text);
    const int axis = mesh.shape[0] == 1 ? 0 : 1;
    const std::string s = axis == 0 ? (mesh.rank() == 1 ? "S" : "S0") : "S1";
    const std::string p = axis == 0 ? (mesh.rank() == 1 ? "+P" : "+P0") : "+P1";
    CHECK(price({K::all_gather, axis, 2, -1}, "RR" + s, mesh) == 0);
    CHECK(price({K::all_to_all, axis, 2, 0}, "RR" + s, mesh) == 0);
    CHECK(price({K::all_reduce, axis, -1, -1}, "RRR" + p, mesh) == 0);
    CHECK(price({K::reduce_scatter, axis, -1, 0}, "RRR" + p, mesh) == 0);
    CHECK(reshard("RRR" + p, "RRR", mesh) == 0);
    CHECK(reshard("RR" + s, s + "RR", mesh) == 0);
  }
}

TEST_CASE("reshard_cost_TwoDimSumsStepsOnTheirLocalSizes") {
  const ir::Mesh mesh = ir::parse_mesh("2x4");
  const ir::Spec from = ir::parse_spec("S0S1R", 2), to = ir::parse_spec("RRR", 2);
  const auto plan = plan_resharding(from, to, mesh);
  REQUIRE(plan.has_value());
  // Dim 0 sheds axis 0 first (local [4, 256, 1024], ring buffer 8 MiB), then dim 1 sheds axis 1
  // (local [8, 256, 1024], ring buffer 32 MiB).
  REQUIRE(*plan == std::vector<Collective>{{K::all_gather, 0, 0, -1}, {K::all_gather, 1, 1, -1}});
  // 5000 + 1/2 * 8 MiB / 25 = 172772.16; 3000 + 3/4 * 32 MiB / 200 = 128829.12.
  CHECK(price((*plan)[0], "S0S1R", mesh) == 172772);
  CHECK(price((*plan)[1], "RS1R", mesh) == 128829);
  CHECK(reshard("S0S1R", "RRR", mesh) == 172772 + 128829);
  // Priced in the other order (axis 1 on the [4, 256, 1024]-local tensor, then axis 0 on the
  // [4, 1024, 1024]-local one) the same gathers would cost 65915 + 676089: the step order matters.
  CHECK(price({K::all_gather, 1, 1, -1}, "S0S1R", mesh) == 65915);
  CHECK(price({K::all_gather, 0, 0, -1}, "S0RR", mesh) == 676089);

  // Partial on both axes to replicated: two all-reduces of the whole buffer.
  // Axis 0: 10000 + 1342177.28; axis 1: 6000 + 251658.24.
  CHECK(reshard("RRR+P01", "RRR", mesh) == 1352177 + 257658);
  // Reduce-scatter then gather: RRR+P0 -> S0RR is 5000 + 1/2 M / 25.
  CHECK(reshard("RRR+P0", "S0RR", mesh) == 676089);
}

TEST_CASE("reshard_cost_FollowsLinkOverrides") {
  // set_links: axis 0 at 50 bytes/ns and 2000 ns per step, axis 1 at 100 bytes/ns and 500 ns.
  ir::Mesh mesh = ir::parse_mesh("2x4");
  ir::set_links(mesh, "50,100", "2,0.5");
  // 2000 + 4194304 / 50 = 85886.08; 1500 + 25165824 / 100 = 253158.24.
  CHECK(reshard("S0S1R", "RRR", mesh) == 85886 + 253158);
  // Only the bandwidth overridden: latency keeps its default.
  ir::Mesh bw_only = ir::parse_mesh("2x4");
  ir::set_links(bw_only, "50,100", "");
  CHECK(bw_only.latency_us == std::vector<double>{5, 1});
  CHECK(reshard("S0S1R", "RRR", bw_only) == 88886 + 254658);  // 5000 + 83886.08, 3000 + 251658.24

  // The same links from JSON.
  const ir::Mesh from_json = ir::mesh_from_json(
      R"({"shape": [2, 4], "bandwidth_gbps": [50, 100], "latency_us": [2, 0.5], "peak_tflops": 100,
          "memory_bytes": 1000})",
      "mesh.json");
  CHECK(from_json.shape == std::vector<int64_t>{2, 4});
  CHECK(from_json.peak_tflops == 100);
  CHECK(from_json.memory_bytes == 1000);
  CHECK(reshard("S0S1R", "RRR", from_json) == 85886 + 253158);
  const AlphaBetaCostModel model;
  CHECK(model.compute_cost(1e9, ir::DType::float32, from_json) == 10000);  // 1e9 / (100 * 1000)

  // JSON with only a shape gets the defaults.
  const ir::Mesh defaults = ir::mesh_from_json(R"({"shape": [2, 4]})", "mesh.json");
  CHECK(defaults.bandwidth_gbps == std::vector<double>{25, 200});
  CHECK(reshard("S0S1R", "RRR", defaults) == 172772 + 128829);
}

TEST_CASE("mesh_from_json_ErrorsNameTheField") {
  CHECK(contains(input_error([] { ir::mesh_from_json("{not json", "m.json"); }), "m.json: not valid JSON"));
  CHECK(contains(input_error([] { ir::mesh_from_json(R"({"bandwidth_gbps": [1]})", "m.json"); }), "'shape'"));
  CHECK(contains(input_error([] { ir::mesh_from_json(R"({"shape": [2, 4], "bandwidth_gbps": [25]})", "m.json"); }),
                 "'bandwidth_gbps'"));
  CHECK(contains(input_error([] { ir::mesh_from_json(R"({"shape": [8], "latency_us": [1, 2]})", "m.json"); }),
                 "'latency_us'"));
  CHECK(contains(input_error([] { ir::mesh_from_json(R"({"shape": [8], "memory_bytes": -5})", "m.json"); }),
                 "'memory_bytes'"));
  CHECK(contains(input_error([] { ir::mesh_from_json(R"({"shape": [8], "peak_tflops": 0})", "m.json"); }),
                 "'peak_tflops'"));
  CHECK(contains(input_error([] { ir::mesh_from_json(R"({"shape": [8], "bandwidth_gbps": [-1]})", "m.json"); }),
                 "'bandwidth_gbps'"));
  // Every message names the source.
  CHECK(contains(input_error([] { ir::mesh_from_json(R"({"shape": [8], "memory_bytes": -5})", "m.json"); }), "m.json"));
}

TEST_CASE("set_links_RejectsBadLists") {
  ir::Mesh mesh = ir::parse_mesh("2x4");
  CHECK(contains(input_error([&] { ir::set_links(mesh, "25", ""); }), "bandwidth"));
  CHECK(contains(input_error([&] { ir::set_links(mesh, "", "1,-2"); }), "latency"));
  CHECK(contains(input_error([&] { ir::set_links(mesh, "25,abc", ""); }), "abc"));
}

TEST_CASE("compute_cost_FlopsOverPeak") {
  const AlphaBetaCostModel model;
  const ir::Mesh mesh = ir::parse_mesh("8");  // 312 TFLOP/s = 312000 flop/ns
  CHECK(model.compute_cost(0, ir::DType::float32, mesh) == 0);
  CHECK(model.compute_cost(1e12, ir::DType::float32, mesh) == 3205128);  // 3205128.205...
  CHECK(model.compute_cost(624000, ir::DType::float32, mesh) == 2);
  CHECK(model.compute_cost(155999, ir::DType::float32, mesh) == 0);  // 0.49999...
  CHECK(model.compute_cost(156000, ir::DType::float32, mesh) == 1);  // 0.5 rounds away from zero
  ir::Mesh fast = mesh;
  fast.peak_tflops = 1000;
  CHECK(model.compute_cost(1e12, ir::DType::float32, fast) == 1000000);
  for (double flops : {1.0, 1e6, 3.7e9, 2.5e13}) {
    CAPTURE(flops);
    CHECK(model.compute_cost(flops, ir::DType::float32, mesh) == std::llround(flops / (312 * 1000.0)));
  }
}

TEST_CASE("reshard_cost_EveryPathBetweenRank2SpecsOn2x2") {
  const ir::Mesh mesh = ir::parse_mesh("2x2");
  const ir::TensorType type{{8, 8}, ir::DType::float32};
  const auto rule = ir::make_rule("ab->ab", {}, {{8, 8}}, {8, 8});
  std::set<ir::Spec> specs;
  for (const auto& sharding : ir::enumerate_op_shardings(rule, mesh, ir::SpecSpace{-1, false, true})) {
    const ir::Spec base = sharding.result;
    REQUIRE(base.partial.empty());
    specs.insert(base);
    std::set<int> used;
    for (const auto& axes : base.dims) used.insert(axes.begin(), axes.end());
    for (const std::vector<int>& partial : {std::vector<int>{0}, {1}, {0, 1}}) {
      bool free = true;
      for (int axis : partial) free = free && !used.count(axis);
      if (!free) continue;
      ir::Spec p = base;
      p.partial = partial;
      specs.insert(p);
    }
  }
  int plain = 0;
  for (const auto& s : specs) plain += s.partial.empty();
  // RR; S0R RS0 S1R RS1; S01R RS01; S0S1 S1S0 (a dim's axes are enumerated major = lower axis).
  CHECK(plain == 9);
  CHECK(specs.size() == 9 + 3 + 3 + 1);  // +P0 on RR S1R RS1, +P1 on RR S0R RS0, +P01 on RR
  // The reversed orders parse and plan too: add them.
  for (const char* text : {"S10R", "RS10"}) specs.insert(ir::parse_spec(text, 2));
  REQUIRE(specs.size() == 18);

  const AlphaBetaCostModel model;
  int pairs = 0, unreachable = 0;
  for (const auto& from : specs) {
    for (const auto& to : specs) {
      CAPTURE(ir::to_string(from, 2));
      CAPTURE(ir::to_string(to, 2));
      bool adds_partial = false;
      for (int axis : to.partial) {
        adds_partial = adds_partial || std::find(from.partial.begin(), from.partial.end(), axis) == from.partial.end();
      }
      const auto cost = model.reshard_cost(type, from, to, mesh);
      CHECK(cost.has_value() == !adds_partial);
      ++pairs;
      if (!cost) {
        ++unreachable;
        continue;
      }
      CHECK(*cost >= 0);
      if (from == to) CHECK(*cost == 0);
      // The plan lands on the target.
      const auto plan = plan_resharding(from, to, mesh);
      REQUIRE(plan.has_value());
      ir::Spec current = from;
      for (const auto& step : *plan) current = apply(step, current);
      CHECK(current == to);
    }
  }
  CHECK(pairs == static_cast<int>(specs.size() * specs.size()));
  CHECK(unreachable > 0);
}

}  // namespace shardsynth::costs
