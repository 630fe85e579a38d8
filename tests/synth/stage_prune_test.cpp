// The pruned cost DP (best_cuts_pruned): its lower bound never exceeds a
// range's solved time, and it chooses what the DP over every range's solved
// time chooses.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "ir/gpt2.hpp"
#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "sanitized.hpp"
#include "synth/solver/problem.hpp"
#include "synth/stages/stage_cuts.hpp"
#include "synth/stages/stage_dp.hpp"
#include "synth/stages/stage_range.hpp"
#include "synth/stages/stages.hpp"

using namespace shardsynth;

namespace {

ir::TensorType f32(std::vector<int64_t> shape) { return {std::move(shape), ir::DType::float32}; }

// x -> (linear -> gelu) per width -> output: layers of unequal size.
ir::Graph mlp_stack(const std::vector<int64_t>& widths) {
  ir::Graph g;
  g.add_node(ir::placeholder("x", f32({8, 16})));
  std::string last = "x";
  int64_t in = 16;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const std::string fc = "layers." + std::to_string(i) + ".fc", act = "layers." + std::to_string(i) + ".act";
    g.add_node(ir::Node{fc, "linear", "", f32({8, widths[i]}), {ir::Param{"weight", f32({widths[i], in}), ""}}, {}, {}},
               {last});
    g.add_node(ir::Node{act, "gelu", "", f32({8, widths[i]}), {}, {}, {}}, {fc});
    last = act;
    in = widths[i];
  }
  g.add_node(ir::Node{"output", "output", "", f32({8, in}), {}, {}, {}}, {last});
  return g;
}

ir::Gpt2Config tiny_gpt2(int layers) {
  ir::Gpt2Config c;
  c.n_layer = layers;
  c.n_head = 2;
  c.n_embd = 32;
  c.vocab = 256;
  c.seq = 8;
  c.batch = 2;
  return c;
}

struct Case {
  std::string name;    // what the subcase shows
  ir::Graph graph;     // the model
  std::string mesh;    // mesh text, axis 0 = stages
  std::string model;   // cost model name
  costs::Mode mode;    // inference or training
};

std::vector<Case> cases() {
  std::vector<Case> out;
  const auto mlp = mlp_stack({64, 256, 32, 128, 512, 64});
  const auto gpt2 = ir::build_gpt2(tiny_gpt2(3));
  for (const std::string model : {"alpha-beta", "slapo"}) {
    for (const auto mode : {costs::Mode::inference, costs::Mode::training}) {
      for (const std::string mesh : {"3x2", "2x4", "4x1"}) {
        const std::string tag = model + " " + (mode == costs::Mode::training ? "training" : "inference") + " " + mesh;
        out.push_back({"mlp " + tag, mlp, mesh, model, mode});
        out.push_back({"gpt2 " + tag, gpt2, mesh, model, mode});
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("best_cuts_pruned_EqualsDpOverEverySolvedRange") {
  const auto all = cases();
  for (std::size_t i = 0; i < all.size(); ++i) {
    // Under the sanitizers, every fifth case (MLP and GPT-2, both modes, every mesh among them).
    if (shardsynth::testing::kSanitized && i % 5 != 0) continue;
    const Case& c = all[i];
    CAPTURE(c.name);
    const auto mesh = ir::parse_mesh(c.mesh);
    const auto model = costs::make_cost_model(c.model);
    synth::SynthOptions options;
    options.lower.mode = c.mode;
    const auto order = synth::program_order(c.graph);
    std::vector<int> bounds{0};
    const auto points = synth::candidate_cuts(c.graph, order);
    bounds.insert(bounds.end(), points.positions.begin(), points.positions.end());
    bounds.push_back(static_cast<int>(order.size()));
    const int m = static_cast<int>(bounds.size());
    REQUIRE(m >= 4);
    synth::RangeSolver solver(c.graph, order, mesh, *model, options);
    int positive = 0;  // ranges with a nonzero bound
    for (int i = 0; i < m; ++i) {
      for (int j = i + 1; j < m; ++j) {
        const int64_t time = solver.time(bounds[i], bounds[j]);
        const int64_t bound = solver.lower_bound(bounds[i], bounds[j]);
        CHECK(bound >= 0);
        CHECK(bound <= time);
        positive += bound > 0;
      }
    }
    CHECK(positive > m);
    const int stages = static_cast<int>(mesh.shape[0]);
    const auto exact = synth::best_cuts(m, stages, [&](int i, int j) { return solver.time(bounds[i], bounds[j]); });
    synth::RangeSolver fresh(c.graph, order, mesh, *model, options);
    const auto pruned = synth::best_cuts_pruned(fresh, bounds, stages);
    REQUIRE(exact.bottleneck < synth::kForbidden);
    CHECK(pruned.cuts == exact.cuts);
    CHECK(pruned.bottleneck == exact.bottleneck);
    CHECK(pruned.total == exact.total);
    CHECK(fresh.stats().ranges < solver.stats().ranges);  // it skipped ranges
  }
}
