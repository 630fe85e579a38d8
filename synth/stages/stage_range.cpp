#include "synth/stages/stage_range.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "ir/error.hpp"
#include "ir/op_table.hpp"
#include "ir/staged_schedule.hpp"
#include "synth/lowering.hpp"
#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

namespace {

constexpr uint64_t kExternal = uint64_t{1} << 62;  // marks an operand received from outside the range

// Everything of a node but its name and edges, as text.
std::string describe(const ir::Node& node) {
  std::string text = node.kind + "|" + node.target + "|" + ir::shape_string(node.type.shape) + ir::dtype_name(node.type.dtype);
  for (const auto& p : node.params) text += "|p:" + p.name + ir::shape_string(p.type.shape) + ir::dtype_name(p.type.dtype);
  for (const auto& [key, values] : node.attrs) {
    text += "|a:" + key;
    for (int64_t x : values) text += "," + std::to_string(x);
  }
  for (const auto& [key, value] : node.real_attrs) {
    char number[40];
    std::snprintf(number, sizeof number, "%.17g", value);
    text += "|r:" + key + "=" + number;
  }
  return text;
}

}  // namespace

std::size_t RangeSolver::KeyHash::operator()(const std::vector<uint64_t>& key) const {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t w : key) h = (h ^ w) * 1099511628211ull + (h >> 29);
  return static_cast<std::size_t>(h);
}

RangeSolver::RangeSolver(const ir::Graph& graph, std::vector<ir::Vertex> order, const ir::Mesh& mesh,
                         const costs::CostModel& model, const SynthOptions& options)
    : graph_(graph), order_(std::move(order)), pos_(graph.size(), -1), mesh_(mesh), sub_(stage_sub_mesh(mesh)),
      model_(model), options_(options) {
  std::map<std::string, uint64_t> interned;
  std::map<std::string, int> holder;  // full parameter name -> position of the node storing it
  for (std::size_t i = 0; i < order_.size(); ++i) {
    pos_[order_[i]] = static_cast<int>(i);
    const ir::Node& node = graph_.node(order_[i]);
    node_id_.push_back(interned.emplace(describe(node), interned.size()).first->second);
    type_id_.push_back(interned.emplace("type|" + ir::shape_string(node.type.shape) + ir::dtype_name(node.type.dtype),
                                        interned.size()).first->second);
    for (const auto& p : node.params) {
      if (p.tied_to.empty()) holder[node.name + "." + p.name] = static_cast<int>(i);
    }
  }
  for (std::size_t i = 0; i < order_.size(); ++i) {
    param_start_.push_back(static_cast<int>(param_owner_.size()));
    for (const auto& p : graph_.node(order_[i]).params) {
      const auto it = p.tied_to.empty() ? holder.end() : holder.find(p.tied_to);
      param_owner_.push_back(it == holder.end() ? -1 : it->second);
    }
  }
  param_start_.push_back(static_cast<int>(param_owner_.size()));
  for (std::size_t i = 0; i < order_.size(); ++i) {
    input_start_.push_back(static_cast<int>(input_pos_.size()));
    for (ir::Vertex u : graph_.inputs_of(order_[i])) input_pos_.push_back(pos_[u]);
    int last = static_cast<int>(i);
    for (const auto& [user, index] : graph_.users_of(order_[i])) last = std::max(last, pos_[user]);
    last_user_.push_back(last);
  }
  input_start_.push_back(static_cast<int>(input_pos_.size()));
  // Ops' least own costs, from one lowering of the whole graph on the
  // sub-mesh: op strategies and costs depend only on the op, its operand
  // types and the mesh (followers add usage, not cost), so they are the same
  // in every stage graph.
  LowerOptions plain = options_.lower;
  plain.allow = nullptr;
  plain.memory_budget.reset();
  const Lowered whole = lower(graph_, sub_, model_, plain);
  std::vector<int64_t> least(order_.size(), 0);
  for (std::size_t n = 0; n < whole.problem.nodes.size(); ++n) {
    if (whole.nodes[n].role != NodeRole::op) continue;
    const auto& costs = whole.problem.nodes[n].costs;
    least[pos_[whole.nodes[n].vertex]] = *std::min_element(costs.begin(), costs.end());
  }
  least_prefix_.assign(order_.size() + 1, 0);
  for (std::size_t i = 0; i < order_.size(); ++i) least_prefix_[i + 1] = cost_add(least_prefix_[i], least[i]);
  for (std::size_t i = 0; i < order_.size(); ++i) {
    const ir::TensorType& type = graph_.node(order_[i]).type;
    const ir::Spec replicated = ir::replicated(static_cast<int>(type.shape.size()));
    send_cost_.push_back(transfer_price(graph_.node(order_[i]), costs::transfer_cost(model_, type, replicated, sub_, mesh_)));
  }
}

int64_t RangeSolver::transfer_price(const ir::Node& producer, const costs::TransferCost& transfer) const {
  // In training the gradient of an activation goes back the same way, as large.
  const bool gradient = options_.lower.mode == costs::Mode::training && producer.kind != ir::kPlaceholder &&
                        producer.type.dtype != ir::DType::int64;
  return gradient ? cost_add(transfer.cost, transfer.cost) : transfer.cost;
}

int64_t RangeSolver::lower_bound(int begin, int end) const {
  int64_t bound = least_prefix_[end] - least_prefix_[begin];
  for (int i = begin; i < end; ++i) {
    if (last_user_[i] >= end) bound = cost_add(bound, send_cost_[i]);
  }
  return bound;
}

std::vector<uint64_t> RangeSolver::signature(int begin, int end) const {
  std::vector<uint64_t> key{static_cast<uint64_t>(end - begin)};
  std::map<int, uint64_t> external;  // position outside the range -> first-use index
  for (int i = begin; i < end; ++i) {
    key.push_back(node_id_[i]);
    key.push_back(input_start_[i + 1] - input_start_[i]);
    for (int k = input_start_[i]; k < input_start_[i + 1]; ++k) {
      const int p = input_pos_[k];
      if (p >= begin) {
        key.push_back(static_cast<uint64_t>(i - p));
      } else {
        const uint64_t index = external.emplace(p, external.size()).first->second;
        key.push_back(kExternal | index);
        key.push_back(type_id_[p]);
      }
    }
    for (int k = param_start_[i]; k < param_start_[i + 1]; ++k) {
      const int owner = param_owner_[k];
      key.push_back(owner < 0 ? 0 : owner >= begin ? 1 : 2);  // own, tied inside, tied outside
    }
    key.push_back(last_user_[i] >= end);  // sends its tensor to a later stage
  }
  return key;
}

std::vector<std::string> RangeSolver::names_in(int begin, int end) const {
  std::vector<std::string> names;
  std::vector<std::string> received;
  std::set<int> seen;
  for (int i = begin; i < end; ++i) {
    names.push_back(graph_.node(order_[i]).name);
    for (ir::Vertex u : graph_.inputs_of(order_[i])) {
      if (pos_[u] < begin && seen.insert(pos_[u]).second) received.push_back(graph_.node(u).name);
    }
  }
  names.insert(names.end(), received.begin(), received.end());
  return names;
}

RangeSolution RangeSolver::solve_fresh(int begin, int end) const {
  RangeSolution out;
  out.begin = begin;
  out.end = end;
  std::vector<std::string> nodes;
  for (int i = begin; i < end; ++i) nodes.push_back(graph_.node(order_[i]).name);
  ir::Graph stage = ir::stage_graph(graph_, nodes);
  // A parameter tied to one stored in another stage is held here too: count its memory.
  std::set<std::string> stored;
  for (ir::Vertex v = 0; v < stage.size(); ++v) {
    for (const auto& p : stage.node(v).params) stored.insert(stage.node(v).name + "." + p.name);
  }
  for (ir::Vertex v = 0; v < stage.size(); ++v) {
    for (auto& p : stage.node(v).params) {
      if (!p.tied_to.empty() && !stored.count(p.tied_to)) p.tied_to.clear();
    }
  }
  // Tensors cross a cut replicated: the sending stage's "<node>:send" output
  // and the receiving stage's placeholder agree whatever ranges meet there,
  // which keeps every range's optimum independent of its neighbours.
  std::set<std::string> own(nodes.begin(), nodes.end());
  SynthOptions options = options_;
  options.lower.allow = [own](const ir::Graph& g, ir::Vertex v, const StrategyInfo& strategy) {
    const ir::Node& node = g.node(v);
    const bool received = node.kind == ir::kPlaceholder && !own.count(node.name);
    const bool sent = node.kind == ir::kOutput && !own.count(node.name);
    return !(received || sent) || strategy.output.is_replicated();
  };
  if (options.lower.memory_budget) {
    // When even the smallest usages of the nodes live at some time step
    // overflow the budget, the range cannot fit (and CEGIS need not prove it).
    const Lowered lowered = lower(stage, sub_, model_, options.lower);
    if (least_peak(lowered.problem).bytes > *options.lower.memory_budget) return out;
  }
  SynthResult result;
  try {
    result = synthesize(stage, sub_, model_, options);
  } catch (const NoPlanError&) {
    return out;  // nothing fits the memory budget
  }
  const auto& best = result.search.best;
  const auto& problem = result.lowered.problem;
  out.feasible = true;
  out.intra = result.search.best_cost;
  out.proven_optimal = result.search.proven_optimal;
  for (std::size_t n = 0; n < best.size(); ++n) out.compute += problem.nodes[n].costs[best[n]];
  out.memory = peak_usage(problem, best).bytes;  // over the stage's step, one micro-batch in flight
  out.resharding = out.intra - out.compute;

  out.schedule = result.schedule;
  const std::string suffix = ir::kSendSuffix;
  for (ir::Vertex v : result.lowered.order) {
    const ir::Node& node = result.lowered.graph.node(v);
    if (node.kind != ir::kOutput || node.name.size() <= suffix.size() ||
        node.name.compare(node.name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const auto producer = graph_.find(node.name.substr(0, node.name.size() - suffix.size()));
    if (!producer) continue;
    const ir::Spec& spec = output_spec(result.lowered, best, v);
    RangeSend send{pos_[*producer] - begin, ir::to_string(spec, sub_.rank()),
                   costs::transfer_cost(model_, node.type, spec, sub_, mesh_)};
    send.price = transfer_price(graph_.node(*producer), send.transfer);
    out.sends_cost += send.price;
    out.sends.push_back(std::move(send));
  }
  std::sort(out.sends.begin(), out.sends.end(), [](const RangeSend& a, const RangeSend& b) { return a.offset < b.offset; });
  return out;
}

const RangeSolution& RangeSolver::solve(int begin, int end) {
  ++stats_.ranges;
  auto key = signature(begin, end);
  const auto it = by_signature_.find(key);
  if (it != by_signature_.end()) {
    ++stats_.reused;
    return *solutions_[it->second];
  }
  ++stats_.solved;
  solutions_.push_back(std::make_unique<RangeSolution>(solve_fresh(begin, end)));
  by_signature_.emplace(std::move(key), static_cast<int>(solutions_.size() - 1));
  return *solutions_.back();
}

int64_t RangeSolver::time(int begin, int end) {
  const RangeSolution& s = solve(begin, end);
  if (!s.feasible) return kForbidden;
  const int64_t t = cost_add(s.intra, s.sends_cost);
  if (t < lower_bound(begin, end)) {
    throw std::logic_error("stage range time " + std::to_string(t) + " is below its lower bound " +
                           std::to_string(lower_bound(begin, end)));
  }
  return t;
}

ir::Schedule RangeSolver::schedule_for(int begin, int end) {
  const RangeSolution& s = solve(begin, end);
  ir::Schedule schedule = s.schedule;
  if (s.begin == begin) return schedule;
  const auto from = names_in(s.begin, s.end);
  const auto to = names_in(begin, end);
  std::map<std::string, std::string> rename;
  for (std::size_t i = 0; i < from.size(); ++i) {
    rename[from[i]] = to[i];
    rename[from[i] + ir::kSendSuffix] = to[i] + ir::kSendSuffix;
    if (i < static_cast<std::size_t>(end - begin)) {
      for (const auto& p : graph_.node(order_[begin + i]).params) rename[from[i] + "." + p.name] = to[i] + "." + p.name;
    }
  }
  auto renamed = [&](const std::string& name) {
    const auto it = rename.find(name);
    return it == rename.end() ? name : it->second;
  };
  for (auto& d : schedule.directives) d.node = renamed(d.node);
  for (auto& t : schedule.specs) t.tensor = renamed(t.tensor);
  return schedule;
}

}  // namespace shardsynth::synth
