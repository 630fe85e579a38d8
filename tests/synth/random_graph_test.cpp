// Random small graphs of the supported ops, lowered under the slapo cost model
// on 1-D meshes: synthesize() must prove the same optimum brute force finds.
// On the same graphs, the peak memory of random plans (the evaluator's sweep
// over liveness intervals) must equal a step-by-step simulation of the
// allocations and frees.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "costs/param_storage.hpp"
#include "ir/dtype.hpp"
#include "ir/error.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "ir/spec.hpp"
#include "ir/tensor.hpp"
#include "synth/lowering.hpp"
#include "synth/random_plan.hpp"
#include "synth/solver/brute_force.hpp"
#include "synth/synthesizer.hpp"
#include "synth/test_graphs.hpp"

namespace shardsynth::synth {
namespace {

using testing::num_assignments;
using testing::op_node;

constexpr int64_t kMaxAssignments = 600000;

// Builds a chain x -> 2..5 random ops -> output, recording the op kinds used.
class ChainBuilder {
 public:
  explicit ChainBuilder(std::mt19937& rng) : rng_(rng) {}

  ir::Graph build(std::set<std::string>& kinds) {
    const std::vector<int64_t> x_shape = {pick_size(), pick_size(), pick_size()};
    push(ir::placeholder("x", {x_shape, ir::DType::float32}), {});
    const int steps = uniform(2, 5);
    for (int i = 0; i < steps; ++i) kinds.insert(step());
    graph_.add_node(op_node("output", "output", shape_), {cur_});
    return std::move(graph_);
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  int64_t pick_size() { return int64_t{2} << uniform(0, 3); }  // 2, 4, 8, 16
  std::string fresh() { return "op" + std::to_string(next_++); }

  void push(ir::Node node, const std::vector<std::string>& inputs) {
    graph_.add_node(node, inputs);
    cur_ = node.name;
    shape_ = node.type.shape;
    tensors_.emplace_back(cur_, shape_);
  }

  std::vector<int64_t> transposed(std::vector<int64_t> shape) const {
    std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
    return shape;
  }

  void transpose_last_two() {
    const auto rank = static_cast<int64_t>(shape_.size());
    ir::Node node = op_node(fresh(), "transpose", transposed(shape_));
    node.attrs["dims"] = {rank - 2, rank - 1};
    push(std::move(node), {cur_});
  }

  // One random op on the current tensor; returns its kind.
  std::string step() {
    static const std::vector<std::string> kinds = {"linear", "matmul",  "gelu",    "relu",      "dropout", "add",
                                                   "layernorm", "softmax", "view", "permute", "transpose"};
    const std::string kind = kinds[uniform(0, static_cast<int>(kinds.size()) - 1)];
    const int64_t last = shape_.back();
    if (kind == "linear") {
      std::vector<int64_t> out = shape_;
      out.back() = pick_size();
      push(ir::linear(fresh(), last, out.back(), out, ir::DType::float32), {cur_});
    } else if (kind == "matmul") {
      // cur [..., m, k] @ transpose(cur) [..., k, m] -> [..., m, m].
      const std::string lhs = cur_;
      std::vector<int64_t> out = shape_;
      out.back() = shape_[shape_.size() - 2];
      transpose_last_two();
      push(op_node(fresh(), "matmul", out), {lhs, cur_});
    } else if (kind == "add") {
      std::vector<std::string> same;
      for (const auto& [name, shape] : tensors_) {
        if (shape == shape_ && name != cur_) same.push_back(name);
      }
      const std::string other = same.empty() ? cur_ : same[uniform(0, static_cast<int>(same.size()) - 1)];
      push(op_node(fresh(), "add", shape_), {cur_, other});
    } else if (kind == "layernorm") {
      ir::Node node = op_node(fresh(), "layernorm", shape_);
      node.params = {{"weight", {{last}, ir::DType::float32}}, {"bias", {{last}, ir::DType::float32}}};
      push(std::move(node), {cur_});
    } else if (kind == "view") {
      std::vector<int64_t> out = shape_;
      if (shape_.size() == 4) {  // merge the last two dims back
        out.pop_back();
        out.back() *= shape_.back();
      } else if (last >= 4) {  // split the last dim into two
        out.back() = 2;
        out.push_back(last / 2);
      } else {  // a view to the same shape
      }
      push(op_node(fresh(), "view", out), {cur_});
    } else if (kind == "permute") {
      std::vector<int64_t> dims(shape_.size());
      for (std::size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(d);
      std::shuffle(dims.begin(), dims.end(), rng_);
      std::vector<int64_t> out;
      for (int64_t d : dims) out.push_back(shape_[d]);
      ir::Node node = op_node(fresh(), "permute", out);
      node.attrs["dims"] = dims;
      push(std::move(node), {cur_});
    } else if (kind == "transpose") {
      transpose_last_two();
    } else {  // gelu, relu, dropout, softmax keep the shape
      push(op_node(fresh(), kind, shape_), {cur_});
    }
    return kind;
  }

  std::mt19937& rng_;
  ir::Graph graph_;
  std::vector<std::pair<std::string, std::vector<int64_t>>> tensors_;  // every tensor so far
  std::string cur_;                                                    // the chain's current tensor
  std::vector<int64_t> shape_;                                         // its shape
  int next_ = 0;                                                       // next op number
};

// Synthesizes and checks against brute force; returns the proven cost.
int64_t check_against_brute_force(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                                  const Lowered& lowered) {
  const BruteForceResult oracle = brute_force(lowered.problem);
  REQUIRE(oracle.cost < kForbidden);  // slapo always allows an all-replicated path to the outputs
  const SynthResult result = synthesize(graph, mesh, model);
  CHECK(result.search.proven_optimal);
  CHECK(result.search.stop_reason == "unsat");
  CHECK(result.search.best_cost == oracle.cost);
  CHECK(result.lowered.problem.nodes.size() == lowered.problem.nodes.size());
  CHECK(result.lowered.problem.edges.size() == lowered.problem.edges.size());
  CHECK(evaluate(result.lowered.problem, result.search.best) == result.search.best_cost);
  return result.search.best_cost;
}

// The peak bytes per device of a plan, by walking the step: graph node i runs
// its forward at step i and, in training, its backward at step 2N-1-i; an
// output is allocated at its forward and freed after its last reader's
// forward (inference) or after its own backward (training); parameters live
// throughout (in training with their gradients and optimizer state, as
// stored), and in training a parameter read in another spec than it is
// stored in, or a tied use's copy, is held in its use's spec at its op's
// forward step and again at its backward step. The outputs one problem node
// decides (an op and the ops following it) are held from the first
// allocation among them to the last free (one interval per problem node).
int64_t simulated_peak(const Lowered& lowered, const Assignment& a, costs::Mode mode) {
  const ir::Graph& graph = lowered.graph;
  const auto order = graph.topological_order();
  const auto n = static_cast<int64_t>(order.size());
  const int64_t steps = mode == costs::Mode::training ? 2 * n + 1 : n;
  std::vector<int64_t> at(graph.size());
  for (int64_t i = 0; i < n; ++i) at[order[i]] = i;
  std::vector<int64_t> first(lowered.problem.nodes.size(), steps), last(lowered.problem.nodes.size(), 0);
  std::vector<int64_t> bytes(lowered.problem.nodes.size(), 0);
  std::vector<int64_t> apart(steps, 0);  // per step: what is held apart from the outputs' problem nodes
  auto hold_output = [&](int node, int64_t from, int64_t to, int64_t b) {
    first[node] = std::min(first[node], from);
    last[node] = std::max(last[node], to);
    bytes[node] += b;
  };
  auto hold = [&](int64_t from, int64_t to, int64_t b) {
    for (int64_t t = from; t < to; ++t) apart[t] += b;
  };
  for (ir::Vertex v : order) {
    const ir::Node& node = graph.node(v);
    const int owner = lowered.owner[v];
    int64_t freed = at[v] + 1;
    if (mode == costs::Mode::training) {
      freed = 2 * n - at[v];
    } else {
      for (const auto& [user, operand] : graph.users_of(v)) freed = std::max(freed, at[user] + 1);
    }
    hold_output(owner, at[v], freed, costs::activation_bytes(node.type, output_spec(lowered, a, v), lowered.mesh));
    for (std::size_t p = 0; p < node.params.size(); ++p) {
      const ir::TensorType& type = node.params[p].type;
      const ir::Spec& use = param_spec(lowered, v, static_cast<int>(p), a[owner]);
      const int64_t shard = ir::num_elements(ir::local_shape(type.shape, use, lowered.mesh)) * ir::dtype_bytes(type.dtype);
      // Training keeps a parameter (shard, gradient, Adam state) on a storage node of its own.
      const auto held = storage_choice(lowered, a, v, static_cast<int>(p));
      if (mode == costs::Mode::training && (!node.params[p].tied_to.empty() || held->storage.stored != use)) {
        hold(at[v], at[v] + 1, shard);
        hold(2 * n - 1 - at[v], 2 * n - at[v], shard);
      }
      if (!node.params[p].tied_to.empty()) continue;  // stored by the one it is tied to
      if (held) {
        const auto b = costs::storage_bytes(type, held->storage, lowered.mesh);
        hold(0, steps, b.param + b.grad + b.state);
        continue;
      }
      hold(0, steps, shard);
    }
  }
  int64_t peak = 0;
  for (int64_t t = 0; t < steps; ++t) {
    int64_t live = apart[t];
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      if (first[k] <= t && t < last[k]) live += bytes[k];
    }
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace

TEST_CASE("peak_usage_RandomPlansMatchSimulatedSteps") {
  std::mt19937 rng(0x11feu);
  const auto slapo = costs::make_cost_model("slapo");
  const auto alpha_beta = costs::make_cost_model("alpha-beta");
  int checked = 0, below_total = 0;
  for (int attempt = 0; attempt < 60; ++attempt) {
    std::set<std::string> kinds;
    const ir::Graph graph = ChainBuilder(rng).build(kinds);
    const ir::Mesh mesh = ir::parse_mesh(attempt % 2 ? "4" : "2");
    const costs::CostModel& model = attempt % 3 ? *alpha_beta : *slapo;
    for (costs::Mode mode : {costs::Mode::inference, costs::Mode::training}) {
      LowerOptions options;
      options.mode = mode;
      Lowered lowered;
      try {
        lowered = lower(graph, mesh, model, options);
      } catch (const ir::InputError&) {
        continue;
      }
      CAPTURE(attempt);
      CAPTURE(costs::mode_name(mode));
      for (uint64_t seed = 0; seed < 4; ++seed) {
        const Assignment a = random_assignment(lowered, seed);
        const int64_t peak = simulated_peak(lowered, a, mode);
        CHECK(peak_usage(lowered.problem, a).bytes == peak);
        CHECK(testing::limit_is_tight(lowered.problem, a, peak));
        int64_t total = 0;
        for (std::size_t k = 0; k < a.size(); ++k) total += lowered.problem.nodes[k].usages[a[k]];
        below_total += peak < total;
        ++checked;
      }
    }
  }
  MESSAGE("checked " << checked << " plans, " << below_total << " peaking below their summed usage");
  CHECK(checked >= 200);
  CHECK(below_total >= 20);  // inference frees activations: the old all-live sum overstates
}

TEST_CASE("synthesize_RandomGraphsMatchBruteForce") {
  const auto model = costs::make_cost_model("slapo");
  std::mt19937 rng(0x5eedu);
  const int devices[] = {2, 4, 8};
  int checked = 0, no_sharding = 0, too_big = 0, nonzero = 0;
  int64_t largest = 0;
  std::set<std::string> kinds_checked;
  for (int attempt = 0; attempt < 400 && checked < 60; ++attempt) {
    std::set<std::string> kinds;
    const ir::Graph graph = ChainBuilder(rng).build(kinds);
    const int p = devices[attempt % 3];
    const ir::Mesh mesh = ir::parse_mesh(std::to_string(p));
    Lowered lowered;
    try {
      lowered = lower(graph, mesh, *model);
    } catch (const ir::InputError&) {
      ++no_sharding;
      continue;
    }
    if (num_assignments(lowered.problem, kMaxAssignments) > kMaxAssignments) {
      ++too_big;
      continue;
    }
    CAPTURE(attempt);
    CAPTURE(p);
    CAPTURE(graph.size());
    if (check_against_brute_force(graph, mesh, *model, lowered) > 0) ++nonzero;
    largest = std::max(largest, num_assignments(lowered.problem, kMaxAssignments));
    kinds_checked.insert(kinds.begin(), kinds.end());
    ++checked;
  }
  std::string kinds_text;
  for (const auto& k : kinds_checked) kinds_text += " " + k;
  MESSAGE("checked " << checked << " (" << nonzero << " with a nonzero optimum, largest " << largest
                     << " assignments), no legal sharding " << no_sharding << ", too big " << too_big
                     << "; kinds:" << kinds_text);
  CHECK(checked >= 30);
  CHECK(nonzero >= 10);  // the optimum is not trivially zero everywhere
  CHECK(kinds_checked.size() >= 9);
}

TEST_CASE("synthesize_MlpMatchesBruteForce") {
  const auto model = costs::make_cost_model("slapo");
  const std::vector<ir::MlpConfig> configs = {
      {2, 4, 8, 16, ir::DType::float32},
      {4, 8, 16, 32, ir::DType::float32},
      {8, 1024, 1024, 4096, ir::DType::float32},
  };
  for (const auto& config : configs) {
    for (int p : {2, 4, 8}) {
      CAPTURE(config.batch);
      CAPTURE(config.hidden);
      CAPTURE(p);
      const ir::Graph graph = ir::build_mlp(config);
      const ir::Mesh mesh = ir::parse_mesh(std::to_string(p));
      const Lowered lowered = lower(graph, mesh, *model);
      REQUIRE(num_assignments(lowered.problem, kMaxAssignments) <= kMaxAssignments);
      check_against_brute_force(graph, mesh, *model, lowered);
    }
  }
}

}  // namespace shardsynth::synth
