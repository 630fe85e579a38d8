// Memory accounting of lowered problems (hand-computed bytes for one GPT-2
// block) and memory budgets as usage limits (checked against brute force).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "ir/error.hpp"
#include "ir/gpt2.hpp"
#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "ir/spec.hpp"
#include "synth/lowering.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/solver/problem.hpp"
#include "synth/synthesizer.hpp"

namespace shardsynth::synth {
namespace {

using costs::Mode;

// One transformer block with small sizes: n_embd 64 (c_attn 64 -> 192, c_fc 64 -> 256), seq 32, batch 2.
ir::Graph small_gpt2() {
  ir::Gpt2Config c;
  c.n_layer = 1;
  c.n_head = 4;
  c.n_embd = 64;
  c.seq = 32;
  c.batch = 2;
  c.vocab = 128;
  c.n_positions = 64;
  return ir::build_gpt2(c);
}

int node_of(const Lowered& lowered, const std::string& name) {
  const auto v = lowered.graph.find(name);
  REQUIRE(v.has_value());
  const int n = lowered.owner.at(*v);
  REQUIRE(n >= 0);
  return n;
}

// Names of the graph nodes whose output the problem node decides.
std::set<std::string> owned(const Lowered& lowered, int node) {
  std::set<std::string> names;
  for (std::size_t v = 0; v < lowered.owner.size(); ++v) {
    if (lowered.owner[v] == node) names.insert(lowered.graph.node(v).name);
  }
  return names;
}

std::string describe(const StrategyInfo& s) {
  std::string text;
  for (const auto& spec : s.operands) text += (text.empty() ? "" : ",") + ir::to_string(spec);
  return text + "->" + ir::to_string(s.result);
}

// The strategy of problem node `node` whose operands and result print as "operands->result" (1-D mesh).
int strategy(const Lowered& lowered, int node, const std::string& text) {
  const auto& strategies = lowered.nodes[node].strategies;
  std::string all;
  for (std::size_t s = 0; s < strategies.size(); ++s) {
    if (describe(strategies[s]) == text) return static_cast<int>(s);
    all += " " + describe(strategies[s]);
  }
  FAIL("no strategy " << text << " among" << all);
  return -1;
}

int64_t usage_of(const Problem& problem, const Assignment& a) { return peak_usage(problem, a).bytes; }

// Bytes of a parameter shard of `elements` float32 elements.
int64_t params(Mode mode, int64_t elements) {
  return mode == Mode::training ? 2 * 4 * elements + 8 * elements : 4 * elements;
}

// Set field by field, so new LowerOptions members keep their defaults.
SynthOptions synth_options(Mode mode, std::optional<int64_t> budget) {
  SynthOptions options;
  options.lower.mode = mode;
  options.lower.memory_budget = budget;
  return options;
}

}  // namespace

TEST_CASE("lower_Gpt2BlockUsageHandComputed") {
  const ir::Graph graph = small_gpt2();
  const ir::Mesh mesh = ir::parse_mesh("2");
  const auto model = costs::make_cost_model("alpha-beta");
  for (Mode mode : {Mode::inference, Mode::training}) {
    CAPTURE(costs::mode_name(mode));
    const Lowered lowered = lower(graph, mesh, *model, synth_options(mode, std::nullopt).lower);
    const Problem& p = lowered.problem;
    CHECK_FALSE(p.usage_limit.has_value());

    // c_attn: weight [64, 192], bias [192], output [2, 32, 192]; split is not a following op.
    const int attn = node_of(lowered, "h.0.attn.c_attn");
    CHECK(owned(lowered, attn) == std::set<std::string>{"h.0.attn.c_attn"});
    const int64_t attn_params = 64 * 192 + 192;  // 12480 elements
    CHECK(p.nodes[attn].usages[strategy(lowered, attn, "RRR,RR,R->RRR")] ==
          params(mode, attn_params) + 4 * 2 * 32 * 192);
    // Column-parallel by heads (blocked over q|k|v): every tensor halves.
    CHECK(p.nodes[attn].usages[strategy(lowered, attn, "RRR,RS(3),S(3)->RRS(3)")] ==
          params(mode, attn_params / 2) + 4 * 2 * 32 * 96);
    // Batch-parallel: replicated params, half the output.
    CHECK(p.nodes[attn].usages[strategy(lowered, attn, "SRR,RR,R->SRR")] ==
          params(mode, attn_params) + 4 * 32 * 192);

    // c_fc: weight [64, 256], bias [256], output [2, 32, 256]. mlp.act (gelu_tanh) does
    // not distribute over partial sums, so under alpha-beta it has a node of its own.
    const int fc = node_of(lowered, "h.0.mlp.c_fc");
    CHECK(owned(lowered, fc) == std::set<std::string>{"h.0.mlp.c_fc"});
    const int64_t fc_params = 64 * 256 + 256;  // 16640 elements
    const int64_t wide = 4 * 2 * 32 * 256;     // 65536 bytes per [2, 32, 256] activation
    CHECK(p.nodes[fc].usages[strategy(lowered, fc, "RRR,RR,R->RRR")] == params(mode, fc_params) + wide);
    if (mode == Mode::inference) CHECK(p.nodes[fc].usages[strategy(lowered, fc, "RRR,RR,R->RRR")] == 132096);
    if (mode == Mode::training) CHECK(p.nodes[fc].usages[strategy(lowered, fc, "RRR,RR,R->RRR")] == 331776);
    CHECK(p.nodes[fc].usages[strategy(lowered, fc, "RRR,RS,S->RRS")] == params(mode, fc_params / 2) + wide / 2);
    // Row-parallel: weight split on its input dim, bias whole, the output a whole partial sum.
    CHECK(p.nodes[fc].usages[strategy(lowered, fc, "RRS,SR,R->RRR+P")] == params(mode, 32 * 256 + 256) + wide);

    // mlp.c_proj owns mlp.dropout; attn.c_proj owns attn.resid_dropout.
    CHECK(owned(lowered, node_of(lowered, "h.0.mlp.c_proj")) ==
          std::set<std::string>{"h.0.mlp.c_proj", "h.0.mlp.dropout"});
    CHECK(owned(lowered, node_of(lowered, "h.0.attn.c_proj")) ==
          std::set<std::string>{"h.0.attn.c_proj", "h.0.attn.resid_dropout"});
    CHECK(owned(lowered, node_of(lowered, "h.0.attn.scores")) ==
          std::set<std::string>{"h.0.attn.scores", "h.0.attn.scale"});

    // lm_head's weight is tied to wte.weight: only its [2, 32, 128] output counts.
    const int head = node_of(lowered, "lm_head");
    CHECK(owned(lowered, head) == std::set<std::string>{"lm_head"});
    const ir::TensorType logits{{2, 32, 128}, ir::DType::float32};
    for (int s = 0; s < p.nodes[head].size(); ++s) {
      CAPTURE(describe(lowered.nodes[head].strategies[s]));
      CHECK(p.nodes[head].usages[s] == costs::activation_bytes(logits, lowered.nodes[head].strategies[s].output, mesh));
    }
    CHECK(p.nodes[head].usages[strategy(lowered, head, "RRR,RR->RRR")] == 4 * 2 * 32 * 128);
    // wte holds the [128, 64] table itself.
    const int wte = node_of(lowered, "wte");
    CHECK(p.nodes[wte].usages[strategy(lowered, wte, "RR,RR->RRR")] == params(mode, 128 * 64) + 4 * 2 * 32 * 64);
  }
}

TEST_CASE("lower_TiedParameterEdgeInTrainingOnly") {
  const ir::Graph graph = small_gpt2();
  const ir::Mesh mesh = ir::parse_mesh("2");
  const auto model = costs::make_cost_model("alpha-beta");
  const Lowered inference = lower(graph, mesh, *model, synth_options(Mode::inference, std::nullopt).lower);
  CHECK(inference.tied.empty());
  CHECK(inference.problem.edges.size() == inference.edges.size());
  const Lowered training = lower(graph, mesh, *model, synth_options(Mode::training, std::nullopt).lower);
  REQUIRE(training.tied.size() == 1);
  REQUIRE(training.problem.edges.size() == training.edges.size() + 1);
  const TiedEdgeLabel& tie = training.tied[0];
  CHECK(training.graph.node(tie.stored).name == "wte");
  CHECK(training.graph.node(tie.use).name == "lm_head");
  const ProblemEdge& edge = training.problem.edges.back();
  const int wte = node_of(training, "wte");
  const int head = node_of(training, "lm_head");
  CHECK(edge.from == wte);
  CHECK(edge.to == head);
  // Every entry is the tied cost of the two specs: free where they agree.
  const ir::TensorType table{{128, 64}, ir::DType::float32};
  int free = 0;
  for (int a = 0; a < training.problem.nodes[wte].size(); ++a) {
    for (int b = 0; b < training.problem.nodes[head].size(); ++b) {
      const ir::Spec& stored = param_spec(training, tie.stored, tie.stored_param, a);
      const ir::Spec& use = param_spec(training, tie.use, tie.use_param, b);
      const int64_t want = *costs::tied_param_cost(*model, Mode::training, table, stored, use, mesh);
      CHECK(edge.costs[a * training.problem.nodes[head].size() + b] == want);
      free += stored == use;
      if (stored != use) CHECK(want > 0);
    }
  }
  CHECK(free > 0);
}

TEST_CASE("synthesize_MemoryBudgetIsRespected") {
  const ir::Graph graph = ir::build_mlp({4, 8, 16, 32, ir::DType::float32});
  const ir::Mesh mesh = ir::parse_mesh("4");
  const auto model = costs::make_cost_model("alpha-beta");
  const SynthResult unconstrained = synthesize(graph, mesh, *model, synth_options(Mode::training, std::nullopt));
  REQUIRE(unconstrained.search.proven_optimal);
  const Problem& free_problem = unconstrained.lowered.problem;
  CHECK(brute_force(free_problem).cost == unconstrained.search.best_cost);
  const int64_t u = usage_of(free_problem, unconstrained.search.best);

  // The least memory any assignment can use: in training every node is live
  // at the step between the forward and the backward pass.
  int64_t least = 0;
  for (const auto& node : free_problem.nodes) least += *std::min_element(node.usages.begin(), node.usages.end());
  REQUIRE(least < u);

  int feasible = 0, infeasible = 0;
  for (int64_t budget : {u + 1000000, u, u - 1, (u + least) / 2, least, least - 1}) {
    CAPTURE(budget);
    const SynthOptions options = synth_options(Mode::training, budget);
    const Lowered lowered = lower(graph, mesh, *model, options.lower);
    REQUIRE(lowered.problem.usage_limit == budget);
    const BruteForceResult oracle = brute_force(lowered.problem);
    try {
      const SynthResult result = synthesize(graph, mesh, *model, options);
      ++feasible;
      CHECK(result.search.proven_optimal);
      CHECK(usage_of(result.lowered.problem, result.search.best) <= budget);
      CHECK(result.search.best_cost >= unconstrained.search.best_cost);
      CHECK(result.search.best_cost == oracle.cost);
      CHECK(evaluate(result.lowered.problem, result.search.best) == result.search.best_cost);
      if (budget >= u) CHECK(result.search.best_cost == unconstrained.search.best_cost);
    } catch (const ir::InputError&) {
      ++infeasible;
      CHECK(oracle.cost == kForbidden);
    }
  }
  CHECK(feasible >= 3);
  CHECK(infeasible >= 1);  // least - 1 fits nothing
}

}  // namespace shardsynth::synth
