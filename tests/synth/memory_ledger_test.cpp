// The planned memory ledger (synth/memory_ledger.hpp): over random plans of
// small models in both modes (in training with recomputation offered), its
// tensors add up to the problem's usage at every time step, and their peak
// is peak_usage's.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "costs/param_storage.hpp"
#include "ir/gpt2.hpp"
#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "ir/schedule.hpp"
#include "synth/liveness.hpp"
#include "synth/lowering.hpp"
#include "synth/memory_figures.hpp"
#include "synth/memory_ledger.hpp"
#include "synth/plans.hpp"
#include "synth/random_plan.hpp"
#include "synth/recompute.hpp"
#include "synth/solver/problem.hpp"
#include "tiny_gpt2.hpp"

namespace shardsynth::synth {
namespace {

// The problem's usage at each time step: the sum over the nodes live then.
std::vector<int64_t> problem_usage(const Problem& problem, const Assignment& a, int64_t steps) {
  std::vector<int64_t> out(steps, 0);
  for (std::size_t n = 0; n < problem.nodes.size(); ++n) {
    for (int64_t s = problem.nodes[n].live_from; s < problem.nodes[n].live_to && s < steps; ++s) {
      out[s] += problem.nodes[n].usages[a[n]];
    }
  }
  return out;
}

// A random small model: an MLP or a GPT-2 of random sizes.
ir::Graph random_model(std::mt19937& rng, std::string& what) {
  auto pick = [&](std::vector<int64_t> sizes) {
    return sizes[std::uniform_int_distribution<std::size_t>(0, sizes.size() - 1)(rng)];
  };
  if (rng() % 2) {
    ir::MlpConfig c{pick({2, 4, 8}), pick({4, 8, 16}), pick({8, 16, 32}), pick({16, 32, 64})};
    what = "mlp " + std::to_string(c.batch) + "x" + std::to_string(c.seq) + "x" + std::to_string(c.hidden);
    return ir::build_mlp(c);
  }
  ir::Gpt2Config c;
  c.n_layer = pick({1, 2});
  c.n_head = pick({2, 4});
  c.n_embd = c.n_head * pick({4, 8, 16});
  c.seq = pick({4, 8, 16});
  c.batch = pick({2, 4, 8});
  c.vocab = pick({32, 64, 128});
  c.n_positions = c.seq;
  what = "gpt2 " + std::to_string(c.n_layer) + " layers, embd " + std::to_string(c.n_embd);
  return ir::build_gpt2(c);
}

}  // namespace

TEST_CASE("memory_ledger_RandomPlansSumToTheProblemsUsage") {
  std::mt19937 rng(0x1ed9e7u);
  const auto alpha_beta = costs::make_cost_model("alpha-beta");
  const auto slapo = costs::make_cost_model("slapo");
  int checked = 0, recomputing = 0, two_spans = 0;
  std::set<std::string> categories;
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string what;
    const ir::Graph graph = random_model(rng, what);
    const char* meshes[] = {"2", "4", "2x2", "8"};
    const std::string mesh = meshes[attempt % 4];
    for (costs::Mode mode : {costs::Mode::inference, costs::Mode::training}) {
      LowerOptions options;
      options.mode = mode;
      // A budget no plan reaches still offers recomputation in training (synth/recompute.hpp).
      if (attempt % 2 == 0) options.memory_budget = int64_t{1} << 40;
      const bool one_d = mesh.find('x') == std::string::npos;  // slapo takes 1-D meshes only
      const Lowered lowered = lower(graph, ir::parse_mesh(mesh), one_d && attempt % 3 == 0 ? *slapo : *alpha_beta, options);
      const int64_t steps = StepClock{mode, static_cast<int64_t>(lowered.order.size())}.end();
      CAPTURE(what);
      CAPTURE(mesh);
      const std::string mode_text = costs::mode_name(mode);
      CAPTURE(mode_text);
      for (uint64_t seed = 0; seed < 3; ++seed) {
        const Assignment a = random_assignment(lowered, seed);
        recomputing += !recomputed_nodes(lowered, a).empty();
        const auto ledger = memory_ledger(lowered, a);
        const auto usage = ledger_usage(ledger, steps);
        CHECK(usage == problem_usage(lowered.problem, a, steps));
        const UsagePeak peak = peak_usage(lowered.problem, a);
        const auto highest = std::max_element(usage.begin(), usage.end());
        CHECK(*highest == peak.bytes);
        CHECK(highest - usage.begin() == peak.step);
        // The figures' categories are the ledger's at the peak.
        const ir::ScheduleMemory figures = memory_figures(lowered, a);
        int64_t activations = 0, params = 0, transient = 0;
        for (const auto& t : ledger) {
          categories.insert(ir::category_name(t.category));
          REQUIRE(!t.live.empty());
          two_spans += t.live.size() > 1;
          const bool live = std::any_of(t.live.begin(), t.live.end(), [&](const ir::LiveSpan& span) {
            return span.from <= peak.step && peak.step < span.to;
          });
          if (t.category == ir::MemoryCategory::activation && live) activations += t.bytes;
          if (t.category == ir::MemoryCategory::transient && live) transient += t.bytes;
          if (t.category == ir::MemoryCategory::param) params += t.bytes;
        }
        CHECK(activations == figures.activations);
        CHECK(transient == figures.transient);
        CHECK(params == figures.params);
        ++checked;
      }
    }
  }
  MESSAGE("checked " << checked << " plans, " << recomputing << " recomputing, " << two_spans
                      << " tensors held over two intervals");
  CHECK(checked == 96);
  CHECK(recomputing >= 10);
  CHECK(two_spans >= 10);
  CHECK(categories == std::set<std::string>{"activation", "grad", "optimizer", "param", "transient"});
}

TEST_CASE("memory_ledger_InferenceActivationsEndAtTheirLastReader") {
  // Each inference activation is held from its producer's forward to its
  // last reader's (the outputs one problem node decides, an op and the ops
  // following it, share one interval), parameters the whole step; the peak
  // is below the old convention's, where an op with parameters held its
  // output the whole step with them.
  const auto model = costs::make_cost_model("alpha-beta");
  const ir::Graph graph = testing::tiny_gpt2(2);
  int checked = 0, alone = 0;
  double highest_ratio = 0;  // of the peak to the old convention's
  for (const std::string mesh : {"2", "2x2"}) {
    const Lowered lowered = lower(graph, ir::parse_mesh(mesh), *model, LowerOptions{});
    const auto n = static_cast<int64_t>(lowered.order.size());
    std::map<std::string, ir::Vertex> vertex;
    std::vector<int64_t> at(graph.size()), last_read(graph.size());
    for (int64_t i = 0; i < n; ++i) {
      const ir::Vertex v = lowered.order[i];
      vertex[graph.node(v).name] = v;
      at[v] = i;
    }
    for (ir::Vertex v : lowered.order) {
      last_read[v] = at[v];
      for (const auto& [user, operand] : graph.users_of(v)) last_read[v] = std::max(last_read[v], at[user]);
    }
    for (uint64_t seed = 0; seed < 4; ++seed) {
      CAPTURE(mesh);
      CAPTURE(seed);
      const Assignment a = random_assignment(lowered, seed);
      const auto ledger = memory_ledger(lowered, a);
      std::vector<ir::PlannedTensor> old = ledger;  // the old convention
      for (std::size_t k = 0; k < ledger.size(); ++k) {
        const ir::PlannedTensor& t = ledger[k];
        CAPTURE(t.name);
        REQUIRE(t.live.size() == 1);
        if (t.category == ir::MemoryCategory::param) {
          CHECK(t.live[0] == ir::LiveSpan{0, n});
          continue;
        }
        REQUIRE(t.category == ir::MemoryCategory::activation);
        const ir::Vertex v = vertex.at(t.name);
        int64_t from = n, to = 0;
        bool with_params = false, shared = false;
        for (ir::Vertex u : lowered.order) {
          if (lowered.owner[u] != lowered.owner[v]) continue;
          from = std::min(from, at[u]);
          to = std::max(to, last_read[u] + 1);
          shared = shared || u != v;
          for (const auto& param : graph.node(u).params) with_params = with_params || param.tied_to.empty();
        }
        CHECK(t.live[0] == ir::LiveSpan{from, to});
        if (!shared) {
          CHECK(t.live[0] == ir::LiveSpan{at[v], last_read[v] + 1});
          ++alone;
        }
        if (with_params) old[k].live = {{0, n}};
      }
      const auto usage = ledger_usage(ledger, n);
      const auto old_usage = ledger_usage(old, n);
      const int64_t peak = *std::max_element(usage.begin(), usage.end());
      const int64_t old_peak = *std::max_element(old_usage.begin(), old_usage.end());
      CHECK(peak == peak_usage(lowered.problem, a).bytes);
      CHECK(peak < old_peak);
      highest_ratio = std::max(highest_ratio, static_cast<double>(peak) / static_cast<double>(old_peak));
      ++checked;
    }
  }
  MESSAGE("checked " << checked << " plans; the peak is at most " << highest_ratio
                     << " of the old convention's, where every op held its output the whole step");
  CHECK(checked == 8);
  CHECK(alone >= 8 * 20);  // most outputs are their node's alone
}

TEST_CASE("memory_ledger_TrainingStorageHasThreePartsLiveTheWholeStep") {
  const auto model = costs::make_cost_model("alpha-beta");
  LowerOptions options;
  options.mode = costs::Mode::training;
  const Lowered lowered = lower(ir::build_mlp({2, 4, 8, 16}), ir::parse_mesh("2"), *model, options);
  const auto ledger = memory_ledger(lowered, random_assignment(lowered, 1));
  const int64_t end = StepClock{costs::Mode::training, static_cast<int64_t>(lowered.order.size())}.end();
  std::vector<std::string> names;
  for (const auto& t : ledger) {
    names.push_back(t.name);
    if (t.name.rfind("fc1.weight", 0) == 0) CHECK(t.live == std::vector<ir::LiveSpan>{{0, end}});
  }
  for (const char* want : {"x", "fc1", "fc1.weight", "fc1.weight:grad", "fc1.weight:state", "gelu", "output"}) {
    CAPTURE(want);
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  }
}

TEST_CASE("memory_ledger_GatheredCopiesAroundForwardAndBackward") {
  // Training: a parameter stored apart from its use (fsdp) and the tied
  // lm_head weight (any plan) are held as "NODE.param:gathered", transient,
  // in the use's spec at their op's forward step and at its backward step.
  const auto model = costs::make_cost_model("alpha-beta");
  const ir::Graph graph = testing::tiny_gpt2(1);
  const ir::Mesh mesh = ir::parse_mesh("2x2");
  for (const std::string plan : {"fsdp", "data-parallel"}) {
    CAPTURE(plan);
    LowerOptions options;
    options.mode = costs::Mode::training;
    options.allow = plan_filter(plan, graph, mesh);
    const Lowered lowered = lower(graph, mesh, *model, options);
    const auto n = static_cast<int64_t>(lowered.order.size());
    const Assignment a = random_assignment(lowered, 7);
    std::map<std::string, ir::PlannedTensor> ledger;
    for (const auto& t : memory_ledger(lowered, a)) ledger[t.name] = t;
    int gathered = 0;
    for (int64_t i = 0; i < n; ++i) {
      const ir::Vertex v = lowered.order[i];
      const ir::Node& node = graph.node(v);
      for (std::size_t p = 0; p < node.params.size(); ++p) {
        const std::string name = node.name + "." + node.params[p].name + ir::kGatheredSuffix;
        CAPTURE(name);
        const ir::Spec& use = param_spec(lowered, v, static_cast<int>(p), a[lowered.owner[v]]);
        const auto held = storage_choice(lowered, a, v, static_cast<int>(p));
        const bool copies = !node.params[p].tied_to.empty() || held->storage.stored != use;
        CHECK(ledger.count(name) == (copies ? 1u : 0u));
        if (!copies || !ledger.count(name)) continue;
        const ir::PlannedTensor& t = ledger.at(name);
        CHECK(t.category == ir::MemoryCategory::transient);
        CHECK(t.bytes == costs::activation_bytes(node.params[p].type, use, mesh));
        CHECK(t.live == std::vector<ir::LiveSpan>{{i, i + 1}, {2 * n - 1 - i, 2 * n - i}});
        ++gathered;
      }
    }
    if (plan == "fsdp") CHECK(gathered > 10);
    if (plan == "data-parallel") CHECK(gathered == 1);  // lm_head.weight, tied to wte.weight
  }
}

}  // namespace shardsynth::synth
