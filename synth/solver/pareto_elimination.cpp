#include "synth/solver/pareto_elimination.hpp"

#include "synth/solver/elimination_order.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <map>
#include <set>
#include <tuple>

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// a + b for least usages, which may be up to 10^18 each: capped at 4 * 10^18
// (an under-estimate of what is left only weakens the memory pruning).
int64_t capped_add(int64_t a, int64_t b) { return std::min<int64_t>(a + std::min<int64_t>(b, 4 * kForbidden - a), 4 * kForbidden); }

// Labels of all factors, flat: per label its cost, reduced-cost excess,
// usage per tracked row, the strategy of the node it eliminated, and the
// labels it was built from (one per input factor, in the step's order).
struct Arena {
  int rows = 0;                   // tracked rows (usages per label)
  std::vector<int64_t> cost;      // per label: cost of the eliminated part
  std::vector<double> excess;     // per label: reduced-cost excess of that part
  std::vector<int64_t> usage;     // per label, per row: usage of that part
  std::vector<int32_t> node;      // per label: the node eliminated
  std::vector<int32_t> strategy;  // per label: its strategy
  std::vector<int64_t> kids_at;   // per label: first of its inputs in `kids`
  std::vector<int32_t> kid_count; // per label: how many inputs
  std::vector<int64_t> kids;      // input labels

  int64_t size() const { return static_cast<int64_t>(cost.size()); }
};

// A factor made by one elimination: a table over its scope's strategies,
// each entry a run of labels in the arena.
struct Factor {
  std::vector<int> scope;             // ascending node ids
  std::vector<int64_t> stride;        // per scope position: index stride (mixed radix over strategy counts)
  std::vector<int64_t> begin;         // per entry: first label, -1 when none
  std::vector<int32_t> count;         // per entry: labels
  std::vector<int64_t> covered_min;   // per tracked row: least usage summed over the nodes its labels cover
  bool consumed = false;              // taken into a later elimination
};

// Candidate labels while one entry is built (not in the arena yet).
struct Candidates {
  int rows = 0, inputs = 0;        // usages and inputs per candidate
  std::vector<int64_t> cost;       // per candidate
  std::vector<double> excess;      // per candidate
  std::vector<int64_t> usage;      // per candidate, per row
  std::vector<int32_t> strategy;   // per candidate
  std::vector<int64_t> kids;       // per candidate, per input

  int size() const { return static_cast<int>(cost.size()); }
  void append(const Candidates& from, int i);  // copies candidate i of `from` (same rows and inputs)
  void clear() {
    cost.clear();
    excess.clear();
    usage.clear();
    strategy.clear();
    kids.clear();
  }
};

struct Step;  // one elimination's inputs and new factor (below)

class Eliminator {
 public:
  Eliminator(const Problem& p, const std::vector<std::vector<int>>& rows, const LpRelaxation* lp,
             const EliminationOptions& options)
      : p_(p), rows_(rows), lp_(lp && lp->has_duals() ? lp : nullptr), options_(options) {}

  LabelElimination run();

 private:
  void prepare();
  bool eliminate(int v);
  bool finish();
  void pareto(Candidates& c, std::vector<int>& kept) const;
  bool pruned(double excess) const;
  bool plan_step(int v, Step& step);
  double outside(const Step& step, const std::vector<int>& value) const;
  bool base(const Step& step, int s, const std::vector<int>& value, double outside, Candidates& cur) const;
  bool merge(const Step& step, int j, int s, const std::vector<int>& value, double outside, Candidates& cur,
             Candidates& next, std::vector<int>& kept);
  bool store(Step& step, int64_t index, const Candidates& all, const std::vector<int>& kept);
  bool next_assignment(const Step& step, std::vector<int>& value, std::vector<std::size_t>& digit) const;
  bool expired();
  int64_t usage(int v, int s) const;
  void lp_excess();
  bool over(const int64_t* usage, const std::vector<int64_t>& covered) const;
  void recover(int64_t root_kids_at, int root_count);

  const Problem& p_;
  const std::vector<std::vector<int>>& rows_;
  const LpRelaxation* lp_;
  const EliminationOptions& options_;
  double lp_bound_ = 0;                          // the LP's bound for the rounded usages
  int k_ = 0;                                    // tracked rows
  std::vector<std::vector<int>> rows_of_;        // per node: tracked rows it is in
  std::vector<int64_t> least_usage_;             // per node: least usage over allowed strategies
  std::vector<int64_t> total_min_;               // per row: least usage summed over its nodes
  std::vector<std::vector<double>> node_excess_; // per node, per strategy: LP reduced cost above the node's least
  std::vector<std::vector<double>> edge_excess_; // per edge, per pair: the same for the edge
  std::vector<std::vector<int>> incident_;       // per node: its edges not yet taken
  std::vector<int> allowed_count_;               // per node: allowed strategies
  std::vector<std::vector<int>> allowed_;        // per node: allowed strategies, ascending
  std::vector<Factor> factors_;
  std::vector<std::vector<int>> factors_of_;     // per node: factors whose scope holds it (consumed ones included)
  std::vector<bool> gone_;                       // per node: eliminated
  Arena arena_;
  LabelElimination result_;
  Clock::time_point start_;
  int64_t ticks_ = 0;
};

int64_t Eliminator::usage(int v, int s) const {
  const int64_t u = p_.nodes[v].usages.empty() ? 0 : p_.nodes[v].usages[s];
  return u - u % options_.granularity;
}

// Past the deadline (checked every 256 calls): the outcome says so.
bool Eliminator::expired() {
  if ((++ticks_ & 255) != 0 || !options_.deadline || Clock::now() < *options_.deadline) return false;
  result_.outcome = "time limit";
  return true;
}

bool Eliminator::pruned(double excess) const {
  if (!lp_) return false;
  const double bound = lp_bound_ + excess;
  const double margin = 1e-7 * (std::fabs(lp_bound_) + std::fabs(excess)) + 1e-3;
  return bound - margin > static_cast<double>(options_.cutoff) - 1;
}

bool Eliminator::over(const int64_t* usage, const std::vector<int64_t>& covered) const {
  if (!p_.usage_limit) return false;
  for (int k = 0; k < k_; ++k) {
    if (usage[k] + (total_min_[k] - covered[k]) > *p_.usage_limit) return true;
  }
  return false;
}

void Eliminator::prepare() {
  const int n = static_cast<int>(p_.nodes.size());
  k_ = p_.usage_limit ? static_cast<int>(rows_.size()) : 0;
  arena_.rows = k_;
  rows_of_.assign(n, {});
  for (int k = 0; k < k_; ++k) {
    for (int v : rows_[k]) rows_of_[v].push_back(k);
  }
  least_usage_.assign(n, 0);
  allowed_.assign(n, {});
  for (int v = 0; v < n; ++v) {
    int64_t least = std::numeric_limits<int64_t>::max();
    for (int s = 0; s < p_.nodes[v].size(); ++s) {
      if (p_.nodes[v].costs[s] >= kForbidden) continue;
      allowed_[v].push_back(s);
      least = std::min(least, usage(v, s));
    }
    least_usage_[v] = allowed_[v].empty() ? 0 : least;
  }
  total_min_.assign(k_, 0);
  for (int k = 0; k < k_; ++k) {
    for (int v : rows_[k]) total_min_[k] = capped_add(total_min_[k], least_usage_[v]);
  }
  if (lp_) lp_excess();
  incident_.assign(n, {});
  for (std::size_t e = 0; e < p_.edges.size(); ++e) {
    incident_[p_.edges[e].from].push_back(static_cast<int>(e));
    if (p_.edges[e].to != p_.edges[e].from) incident_[p_.edges[e].to].push_back(static_cast<int>(e));
  }
  factors_of_.assign(n, {});
  gone_.assign(n, false);
}

// The LP's reduced costs above each node's and edge's least, and its bound,
// both for the rounded usages: a binding row's dual prices usage u at
// dual * u / limit in a node's reduced cost, so rounding u down by r lowers
// it by dual * r / limit, and the bound by how much each node's least falls.
void Eliminator::lp_excess() {
  const int n = static_cast<int>(p_.nodes.size());
  std::vector<std::vector<int>> binding_of(n);
  for (std::size_t k = 0; k < lp_->binding_rows.size(); ++k) {
    for (int v : lp_->binding_rows[k]) binding_of[v].push_back(static_cast<int>(k));
  }
  const double limit = p_.usage_limit ? static_cast<double>(*p_.usage_limit) : 1;
  lp_bound_ = lp_->bound_exact;
  node_excess_.assign(n, {});
  for (int v = 0; v < n; ++v) {
    std::vector<double> d = lp_->node_reduced[v];
    const double before = *std::min_element(d.begin(), d.end());
    for (int s = 0; s < static_cast<int>(d.size()); ++s) {
      const int64_t u = p_.nodes[v].usages.empty() ? 0 : p_.nodes[v].usages[s];
      for (int k : binding_of[v]) d[s] -= lp_->binding_duals[k] * static_cast<double>(u % options_.granularity) / limit;
    }
    const double least = *std::min_element(d.begin(), d.end());
    lp_bound_ += least - before;
    for (double x : d) node_excess_[v].push_back(x - least);
  }
  edge_excess_.assign(p_.edges.size(), {});
  for (std::size_t e = 0; e < p_.edges.size(); ++e) {
    const auto& d = lp_->edge_reduced[e];
    const double least = d.empty() ? 0 : *std::min_element(d.begin(), d.end());
    for (double x : d) edge_excess_[e].push_back(x - least);
  }
}

// The rows that tell candidates apart: a row whose usage is the same for
// every candidate, or equal to an earlier row's for every candidate (two
// rows that differ only in nodes this factor does not cover), decides
// nothing and is left out.
std::vector<int> deciding_rows(const Candidates& c) {
  const int k = c.rows;
  auto use = [&](int a, int r) { return c.usage[static_cast<std::size_t>(a) * k + r]; };
  std::vector<int> rows;
  for (int r = 0; r < k; ++r) {
    bool constant = true;
    for (int a = 1; a < c.size() && constant; ++a) constant = use(a, r) == use(0, r);
    if (constant) continue;
    bool repeated = false;
    for (int q : rows) {
      bool same = true;
      for (int a = 0; a < c.size() && same; ++a) same = use(a, r) == use(a, q);
      repeated = repeated || same;
    }
    if (!repeated) rows.push_back(r);
  }
  return rows;
}

// pareto() with three deciding rows: staircases over the first two, one per
// usage of the third, in a vector sorted by it (walked up to the
// candidate's own third usage; a staircase whose first step lies right of
// the candidate is passed over without a lookup).
void pareto_three(const Candidates& c, const std::vector<int>& order, const std::vector<int>& rows,
                  std::vector<int>& kept) {
  const int k = c.rows;
  auto at = [&](int i, int r) { return c.usage[static_cast<std::size_t>(i) * k + rows[r]]; };
  struct Stairs {
    int64_t z;                        // the third row's usage
    std::map<int64_t, int64_t> steps;  // first row's usage -> second's, a staircase
  };
  std::vector<Stairs> stairs;
  for (int i : order) {
    const int64_t x = at(i, 0), y = at(i, 1), z = at(i, 2);
    bool beaten = false;
    for (const Stairs& s : stairs) {
      if (s.z > z) break;
      if (s.steps.begin()->first > x) continue;
      const auto it = s.steps.upper_bound(x);
      if (std::prev(it)->second <= y) {
        beaten = true;
        break;
      }
    }
    if (beaten) continue;
    kept.push_back(i);
    auto pos = std::lower_bound(stairs.begin(), stairs.end(), z, [](const Stairs& s, int64_t v) { return s.z < v; });
    if (pos == stairs.end() || pos->z != z) pos = stairs.insert(pos, Stairs{z, {}});
    auto it = pos->steps.upper_bound(x);
    while (it != pos->steps.end() && it->second >= y) it = pos->steps.erase(it);
    pos->steps[x] = y;
  }
}

// Keeps the candidates no other one beats (cost, then every row's usage):
// `kept` gets their indices in order of cost (ties: fewer bytes in all,
// then the earlier one). In that order a candidate is beaten by a kept one
// with no more usage on every deciding row: with none, the cheapest beats
// all; with one, a candidate is kept when its usage is below every kept
// one's; with two, kept ones form a staircase (first row's usage up,
// second's down) and the candidate is beaten when the step at or left of
// its first usage is at or below its second; with more, one staircase per
// value of the other rows, and the candidate is beaten by a staircase whose
// other usages are all at or below its own.
void Eliminator::pareto(Candidates& c, std::vector<int>& kept) const {
  kept.clear();
  const int k = c.rows;
  std::vector<int> order(c.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int64_t> sum(c.size(), 0);
  for (int a = 0; a < c.size(); ++a) {
    for (int r = 0; r < k; ++r) sum[a] += c.usage[static_cast<std::size_t>(a) * k + r];
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return std::tie(c.cost[a], sum[a], a) < std::tie(c.cost[b], sum[b], b);
  });
  const std::vector<int> rows = deciding_rows(c);
  const int d = static_cast<int>(rows.size());
  auto at = [&](int i, int r) { return c.usage[static_cast<std::size_t>(i) * k + rows[r]]; };
  if (d == 0) {
    if (!order.empty()) kept.push_back(order[0]);
    return;
  }
  if (d == 1) {
    int64_t least = std::numeric_limits<int64_t>::max();
    for (int i : order) {
      if (at(i, 0) >= least) continue;
      least = at(i, 0);
      kept.push_back(i);
    }
    return;
  }
  if (d == 3) return pareto_three(c, order, rows, kept);
  std::map<std::vector<int64_t>, std::map<int64_t, int64_t>> stairs;
  std::vector<int64_t> rest(d - 2);
  for (int i : order) {
    const int64_t x = at(i, 0), y = at(i, 1);
    for (int r = 2; r < d; ++r) rest[r - 2] = at(i, r);
    bool beaten = false;
    for (const auto& [key, steps] : stairs) {
      if (!key.empty() && key[0] > rest[0]) break;  // keys ascend by their first entry
      bool below = true;
      for (int r = 1; r < d - 2 && below; ++r) below = key[r] <= rest[r];
      if (!below) continue;
      const auto it = steps.upper_bound(x);
      if (it != steps.begin() && std::prev(it)->second <= y) {
        beaten = true;
        break;
      }
    }
    if (beaten) continue;
    kept.push_back(i);
    auto& steps = stairs[rest];
    auto it = steps.upper_bound(x);
    while (it != steps.end() && it->second >= y) it = steps.erase(it);
    steps[x] = y;
  }
}

// One input of an elimination: a factor and, per position of its scope, the
// position in the new scope (-1 for the node being eliminated).
struct Input {
  int factor = 0;
  std::vector<int> at;
};

// Where the inputs of one elimination sit in its new factor's scope.
struct EdgeAt {
  int edge = 0;            // index into Problem::edges
  int at = 0;              // the position of its other end (for `inner`: of its `to` end) in the scope
  bool v_is_from = false;  // whether the eliminated node picks the table's row
  int cols = 0;            // strategies of its `to` end (for `inner`: the position of its `from` end)
};

struct Step {
  int v = 0;                                       // the node eliminated
  std::vector<int> inputs;                         // factors over v not taken yet
  std::vector<Input> in;                           // the same, with their scope positions
  std::vector<EdgeAt> edges;                       // v's edges to nodes still there
  std::vector<EdgeAt> inner;                       // edges between two scope nodes (no label counted them yet)
  std::vector<std::vector<int64_t>> partial_cover; // per row, least usage covered after v and inputs [0, j)
  Factor out;                                      // the new factor (its table empty)
  int64_t entries = 0;                             // its table's size
};

void Candidates::append(const Candidates& from, int i) {
  cost.push_back(from.cost[i]);
  excess.push_back(from.excess[i]);
  const auto ub = from.usage.begin() + static_cast<long>(i) * rows;
  usage.insert(usage.end(), ub, ub + rows);
  strategy.push_back(from.strategy[i]);
  const auto kb = from.kids.begin() + static_cast<long>(i) * inputs;
  kids.insert(kids.end(), kb, kb + inputs);
}

// The inputs of eliminating v and its new factor's scope, strides and
// coverage; false (outcome "too wide") when its table would be too large.
bool Eliminator::plan_step(int v, Step& step) {
  step.v = v;
  for (int f : factors_of_[v]) {
    if (!factors_[f].consumed) step.inputs.push_back(f);
  }
  std::set<int> scope;
  for (int f : step.inputs) {
    for (int w : factors_[f].scope) {
      if (w != v) scope.insert(w);
    }
  }
  std::vector<int> edges;
  for (int e : incident_[v]) {
    const ProblemEdge& edge = p_.edges[e];
    if (gone_[edge.from == v ? edge.to : edge.from]) continue;
    edges.push_back(e);
    scope.insert(edge.from == v ? edge.to : edge.from);
  }
  Factor& out = step.out;
  out.scope.assign(scope.begin(), scope.end());
  const int width = static_cast<int>(out.scope.size());
  result_.width = std::max(result_.width, width + 1);
  step.entries = 1;
  out.stride.assign(width, 0);
  for (int i = width - 1; i >= 0; --i) {
    out.stride[i] = step.entries;
    step.entries *= std::max(1, p_.nodes[out.scope[i]].size());
    if (step.entries > options_.max_entries) {
      result_.outcome = "too wide";
      return false;
    }
  }
  auto position = [&](int w) {
    return static_cast<int>(std::lower_bound(out.scope.begin(), out.scope.end(), w) - out.scope.begin());
  };
  for (int f : step.inputs) {
    Input i{f, {}};
    for (int w : factors_[f].scope) i.at.push_back(w == v ? -1 : position(w));
    step.in.push_back(std::move(i));
  }
  for (int e : edges) {
    const ProblemEdge& edge = p_.edges[e];
    const bool from = edge.from == v;
    step.edges.push_back({e, position(from ? edge.to : edge.from), from, p_.nodes[edge.to].size()});
  }
  for (int i = 0; i < width && lp_; ++i) {
    for (int e : incident_[out.scope[i]]) {
      const ProblemEdge& edge = p_.edges[e];
      if (edge.from != out.scope[i] || edge.to == v || edge.from == edge.to || gone_[edge.to]) continue;
      if (!std::binary_search(out.scope.begin(), out.scope.end(), edge.to)) continue;
      step.inner.push_back({e, position(edge.to), true, i});
    }
  }
  out.covered_min.assign(k_, 0);
  for (int k : rows_of_[v]) out.covered_min[k] = capped_add(out.covered_min[k], least_usage_[v]);
  step.partial_cover.push_back(out.covered_min);
  for (const Input& i : step.in) {
    for (int k = 0; k < k_; ++k) out.covered_min[k] = capped_add(out.covered_min[k], factors_[i.factor].covered_min[k]);
    step.partial_cover.push_back(out.covered_min);
  }
  return true;
}

// What every completion of an entry still adds to the excess: the scope
// nodes' own and the edges among them (the rest adds >= 0).
double Eliminator::outside(const Step& step, const std::vector<int>& value) const {
  if (!lp_) return 0;
  double sum = 0;
  for (std::size_t i = 0; i < value.size(); ++i) sum += node_excess_[step.out.scope[i]][value[i]];
  for (const EdgeAt& ea : step.inner) {
    const int cols = p_.nodes[p_.edges[ea.edge].to].size();
    sum += edge_excess_[ea.edge][static_cast<std::size_t>(value[ea.cols]) * cols + value[ea.at]];
  }
  return sum;
}

// The label of v alone at strategy s (its cost, usage and edges to the
// scope at `value`) into `cur`; false when forbidden or pruned.
bool Eliminator::base(const Step& step, int s, const std::vector<int>& value, double outside, Candidates& cur) const {
  const int v = step.v;
  int64_t cost = p_.nodes[v].costs[s];
  double excess = lp_ ? node_excess_[v][s] : 0;
  for (const EdgeAt& ea : step.edges) {
    const int t = value[ea.at];
    const std::size_t k =
        ea.v_is_from ? static_cast<std::size_t>(s) * ea.cols + t : static_cast<std::size_t>(t) * ea.cols + s;
    const int64_t c = p_.edges[ea.edge].costs[k];
    if (c >= kForbidden) return false;
    cost = cost_add(cost, c);
    if (lp_) excess += edge_excess_[ea.edge][k];
  }
  if (cost >= options_.cutoff || pruned(excess + outside)) return false;
  std::vector<int64_t> usage(k_, 0);
  for (int k : rows_of_[v]) usage[k] += this->usage(v, s);
  if (over(usage.data(), step.partial_cover[0])) return false;
  cur.clear();
  cur.cost.push_back(cost);
  cur.excess.push_back(excess);
  cur.usage = std::move(usage);
  cur.strategy.push_back(s);
  cur.kids.assign(cur.inputs, -1);
  return true;
}

// `cur` combined with input j's labels at its entry for (`value`, s):
// every pair not pruned, then those no other one beats. False past the deadline.
bool Eliminator::merge(const Step& step, int j, int s, const std::vector<int>& value, double outside, Candidates& cur,
                       Candidates& next, std::vector<int>& kept) {
  const Factor& f = factors_[step.in[j].factor];
  int64_t fi = 0;
  for (std::size_t q = 0; q < step.in[j].at.size(); ++q) fi += f.stride[q] * (step.in[j].at[q] < 0 ? s : value[step.in[j].at[q]]);
  const int m = cur.inputs;
  next.clear();
  std::vector<int64_t> usage(k_);
  for (int a = 0; a < cur.size() && f.begin[fi] >= 0; ++a) {
    if (expired()) return false;
    for (int l = 0; l < f.count[fi]; ++l) {
      const int64_t lab = f.begin[fi] + l;
      const double x = cur.excess[a] + arena_.excess[lab];
      if (cur.cost[a] + arena_.cost[lab] >= options_.cutoff || pruned(x + outside)) continue;
      for (int k = 0; k < k_; ++k) usage[k] = cur.usage[static_cast<std::size_t>(a) * k_ + k] + arena_.usage[lab * k_ + k];
      if (over(usage.data(), step.partial_cover[j + 1])) continue;
      next.cost.push_back(cur.cost[a] + arena_.cost[lab]);
      next.excess.push_back(x);
      next.usage.insert(next.usage.end(), usage.begin(), usage.end());
      next.strategy.push_back(s);
      const auto kb = cur.kids.begin() + static_cast<long>(a) * m;
      next.kids.insert(next.kids.end(), kb, kb + m);
      next.kids[next.kids.size() - m + j] = lab;
    }
  }
  pareto(next, kept);
  cur.clear();
  for (int i : kept) cur.append(next, i);
  return true;
}

// The kept labels of one entry into the arena; false past the label limit.
bool Eliminator::store(Step& step, int64_t index, const Candidates& all, const std::vector<int>& kept) {
  if (kept.empty()) return true;
  step.out.begin[index] = arena_.size();
  step.out.count[index] = static_cast<int32_t>(kept.size());
  for (int i : kept) {
    arena_.cost.push_back(all.cost[i]);
    arena_.excess.push_back(all.excess[i]);
    const auto ub = all.usage.begin() + static_cast<long>(i) * k_;
    arena_.usage.insert(arena_.usage.end(), ub, ub + k_);
    arena_.node.push_back(step.v);
    arena_.strategy.push_back(all.strategy[i]);
    arena_.kids_at.push_back(static_cast<int64_t>(arena_.kids.size()));
    arena_.kid_count.push_back(all.inputs);
    const auto kb = all.kids.begin() + static_cast<long>(i) * all.inputs;
    arena_.kids.insert(arena_.kids.end(), kb, kb + all.inputs);
  }
  if (arena_.size() <= options_.max_labels) return true;
  result_.outcome = "label limit";
  return false;
}

// Moves `value` to the scope's next assignment of allowed strategies (the
// last position turns fastest); false after the last one.
bool Eliminator::next_assignment(const Step& step, std::vector<int>& value, std::vector<std::size_t>& digit) const {
  for (int i = static_cast<int>(value.size()) - 1; i >= 0; --i) {
    const auto& allowed = allowed_[step.out.scope[i]];
    if (++digit[i] < allowed.size()) {
      value[i] = allowed[digit[i]];
      return true;
    }
    digit[i] = 0;
    value[i] = allowed[0];
  }
  return false;
}

bool Eliminator::eliminate(int v) {
  Step step;
  if (!plan_step(v, step)) return false;
  step.out.begin.assign(step.entries, -1);
  step.out.count.assign(step.entries, 0);
  const int width = static_cast<int>(step.out.scope.size());
  const int m = static_cast<int>(step.in.size());
  Candidates all, cur, next;
  all.rows = cur.rows = next.rows = k_;
  all.inputs = cur.inputs = next.inputs = m;
  std::vector<int> kept;
  std::vector<int> value(width, 0);          // the scope's strategies
  std::vector<std::size_t> digit(width, 0);  // odometer over allowed strategies
  for (int i = 0; i < width; ++i) value[i] = allowed_[step.out.scope[i]][0];  // run() checked none is empty
  do {
    if (expired()) return false;
    int64_t index = 0;
    for (int i = 0; i < width; ++i) index += step.out.stride[i] * value[i];
    const double out = outside(step, value);
    all.clear();
    for (int s : allowed_[v]) {
      if (!base(step, s, value, out, cur)) continue;
      for (int j = 0; j < m && cur.size() > 0; ++j) {
        if (!merge(step, j, s, value, out, cur, next, kept)) return false;
      }
      for (int a = 0; a < cur.size(); ++a) all.append(cur, a);
    }
    pareto(all, kept);
    if (!store(step, index, all, kept)) return false;
  } while (next_assignment(step, value, digit));
  for (int f : step.inputs) factors_[f].consumed = true;
  gone_[v] = true;
  const int id = static_cast<int>(factors_.size());
  for (int w : step.out.scope) factors_of_[w].push_back(id);
  factors_.push_back(std::move(step.out));
  return true;
}

// Combines the factors left over no node (one per connected part) and
// takes the cheapest label that keeps every tracked row.
bool Eliminator::finish() {
  std::vector<int> roots;
  for (std::size_t f = 0; f < factors_.size(); ++f) {
    if (!factors_[f].consumed && factors_[f].scope.empty()) roots.push_back(static_cast<int>(f));
  }
  const int m = static_cast<int>(roots.size());
  Candidates cur, next;
  cur.rows = next.rows = k_;
  cur.inputs = next.inputs = m;
  cur.cost.push_back(0);
  cur.excess.push_back(0);
  cur.usage.assign(k_, 0);
  cur.strategy.push_back(-1);
  cur.kids.assign(m, -1);
  std::vector<int64_t> covered(k_, 0), usage(k_);
  std::vector<int> kept;
  for (int j = 0; j < m && cur.size() > 0; ++j) {
    const Factor& f = factors_[roots[j]];
    for (int k = 0; k < k_; ++k) covered[k] = capped_add(covered[k], f.covered_min[k]);
    next.clear();
    for (int a = 0; a < cur.size() && f.begin[0] >= 0; ++a) {
      if (expired()) return false;
      for (int l = 0; l < f.count[0]; ++l) {
        const int64_t lab = f.begin[0] + l;
        const double x = cur.excess[a] + arena_.excess[lab];
        if (cur.cost[a] + arena_.cost[lab] >= options_.cutoff || pruned(x)) continue;
        for (int k = 0; k < k_; ++k) usage[k] = cur.usage[static_cast<std::size_t>(a) * k_ + k] + arena_.usage[lab * k_ + k];
        if (over(usage.data(), covered)) continue;
        next.cost.push_back(cur.cost[a] + arena_.cost[lab]);
        next.excess.push_back(x);
        next.usage.insert(next.usage.end(), usage.begin(), usage.end());
        next.strategy.push_back(-1);
        const auto kb = cur.kids.begin() + static_cast<long>(a) * m;
        next.kids.insert(next.kids.end(), kb, kb + m);
        next.kids[next.kids.size() - m + j] = lab;
      }
    }
    pareto(next, kept);
    cur.clear();
    for (int i : kept) {
      cur.cost.push_back(next.cost[i]);
      cur.excess.push_back(next.excess[i]);
      const auto ub = next.usage.begin() + static_cast<long>(i) * k_;
      cur.usage.insert(cur.usage.end(), ub, ub + k_);
      cur.strategy.push_back(-1);
      const auto kb = next.kids.begin() + static_cast<long>(i) * m;
      cur.kids.insert(cur.kids.end(), kb, kb + m);
    }
  }
  // `cur` is sorted by cost: its first candidate below the cutoff is the answer.
  for (int a = 0; a < cur.size(); ++a) {
    if (cur.cost[a] >= options_.cutoff) break;
    result_.cost = cur.cost[a];
    result_.plan.assign(p_.nodes.size(), -1);
    std::vector<int64_t> stack(cur.kids.begin() + static_cast<long>(a) * m, cur.kids.begin() + static_cast<long>(a + 1) * m);
    while (!stack.empty()) {
      const int64_t lab = stack.back();
      stack.pop_back();
      result_.plan[arena_.node[lab]] = arena_.strategy[lab];
      for (int i = 0; i < arena_.kid_count[lab]; ++i) stack.push_back(arena_.kids[arena_.kids_at[lab] + i]);
    }
    result_.outcome = "found";
    return true;
  }
  result_.outcome = "none";
  return true;
}

LabelElimination Eliminator::run() {
  start_ = Clock::now();
  prepare();
  bool complete = std::none_of(allowed_.begin(), allowed_.end(), [](const auto& a) { return a.empty(); });
  if (!complete) result_.outcome = "none";  // a node with no strategy left: no plan at all
  for (int v : complete ? elimination_order(p_) : std::vector<int>{}) {
    if (!eliminate(v)) {
      complete = false;
      break;
    }
  }
  if (complete && !finish()) result_.plan.clear();
  result_.labels = arena_.size();
  result_.ms = std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  return std::move(result_);
}

}  // namespace

LabelElimination eliminate_with_labels(const Problem& problem, const std::vector<std::vector<int>>& rows,
                                  const LpRelaxation* lp, const EliminationOptions& options) {
  return Eliminator(problem, rows, lp, options).run();
}

}  // namespace shardsynth::synth
