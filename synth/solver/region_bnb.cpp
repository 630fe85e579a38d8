#include "synth/solver/region_bnb.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "synth/solver/interrupt.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// Sweeps of message passing over a region's edges before its search
// (pass_messages). At fixed rounds 3 and 8 both beat none on the
// development set's 816- and 3,000-node problems; 8 was the better of the
// two on d10k-a and d30k-a, 16 no better than 8 (BENCHMARKS.md, "Issue 32:
// messages in the branch and bound's regions").
constexpr int kMessageSweeps = 8;

// One region edge on the region's values: residual costs, row-major by the
// values of its `a` end.
struct LocalEdge {
  int a = 0;                   // variable whose values pick the row
  int b = 0;                   // variable whose values pick the column
  int cols = 0;                // values of b
  std::vector<int64_t> costs;  // [value of a * cols + value of b]; kForbidden = forbidden pair
};

// A region edge as one of its end variables sees it.
struct Arc {
  int edge = 0;       // index into the region's edges
  int other = 0;      // the variable at the other end
  bool is_a = false;  // whether this variable is the edge's `a`
};

// One memory row: the region's usage on one stretch of slots.
struct MemoryRow {
  std::vector<int> vars;                    // member variables
  std::vector<std::vector<int64_t>> usage;  // per member: usage per strategy (later per value)
  std::vector<int64_t> lightest;            // per member: least usage over its values
  int64_t slack = 0;                        // room left with every member at its lightest (assigned ones at their value)
};

// Where a variable takes part in a row.
struct Membership {
  int row = 0;     // index into the rows
  int member = 0;  // index into the row's members
};

// A saved copy of one variable's values and costs, for backtracking.
struct Saved {
  int var = 0;              // the variable
  std::size_t offset = 0;   // where its copy starts in the save buffers
  int count = 0;            // its live value count then
};

class RegionBnb {
 public:
  RegionBnb(LocalSearch& search, const std::vector<int>& region, long max_work,
            std::optional<Clock::time_point> deadline)
      : search_(search), region_(region), max_work_(max_work), deadline_(deadline), k_(static_cast<int>(region.size())) {}

  BnbOutcome run() {
    BnbOutcome out;
    out.nodes = k_;
    if (prepare()) {
      out.root_bound = root_bound();
      depth_values_.resize(k_ + 1);
      dfs(0);
      out.proven = !aborted_;
      out.improved = found_ && apply();
    }
    out.visits = visits_;
    out.work = work_;
    out.cost = search_.cost();
    return out;
  }

 private:
  // ---- building the subproblem ----

  // Returns false when nothing is left to search (never for a feasible incumbent).
  bool prepare() {
    local_.assign(search_.folded().kernel.nodes.size(), -1);
    for (int i = 0; i < k_; ++i) local_[region_[i]] = i;
    unary_against_fixed();
    memory_rows();
    prune_by_rows();
    make_arc_consistent();
    for (int i = 0; i < k_; ++i) {
      if (!alive_[i][search_.assignment()[region_[i]]]) return false;  // never expected: the incumbent is allowed
    }
    compress();
    pass_messages();
    project_edges();
    incumbent_cost();
    return true;
  }

  // Per variable and strategy: its cost plus its edges to fixed nodes.
  void unary_against_fixed() {
    const Problem& kernel = search_.folded().kernel;
    const Assignment& x = search_.assignment();
    unary_.resize(k_);
    alive_.resize(k_);
    for (int i = 0; i < k_; ++i) {
      const int u = region_[i];
      unary_[i] = kernel.nodes[u].costs;
      for (const auto& inc : search_.incidences()[u]) {
        if (local_[inc.other] >= 0) continue;
        const auto& e = kernel.edges[inc.edge];
        const std::size_t cols = kernel.nodes[e.to].costs.size();
        for (std::size_t s = 0; s < unary_[i].size(); ++s) {
          const int64_t c = inc.is_from ? e.costs[s * cols + x[inc.other]] : e.costs[x[inc.other] * cols + s];
          unary_[i][s] = cost_add(unary_[i][s], c);
        }
      }
      alive_[i].resize(unary_[i].size());
      for (std::size_t s = 0; s < unary_[i].size(); ++s) alive_[i][s] = unary_[i][s] < kForbidden;
    }
  }

  // One row per stretch between consecutive piece ends of the region that
  // could bind; identical rows kept once, with the least room. The
  // stretches are swept in order, and each variable's usage there is kept
  // up to date as its pieces start and end: a region of hundreds of nodes
  // has as many stretches, and summing every member's usage afresh in
  // each of them took 15% of perf's samples of a search on the contest's M.
  void memory_rows() {
    const FoldedProblem& folded = search_.folded();
    if (!folded.usage_limit) return;
    std::vector<int> cuts;
    for (int u : region_) {
      for (const auto& p : folded.pieces[u]) cuts.push_back(p.from), cuts.push_back(p.to);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    StretchSweep sweep(*this, cuts);
    std::map<std::pair<std::vector<int>, std::vector<std::vector<int64_t>>>, std::size_t> same;
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      sweep.advance_to(c);
      const int64_t room = *folded.usage_limit - (search_.profile().max(cuts[c], cuts[c + 1]) - sweep.now());
      if (sweep.most() <= room) continue;  // cannot bind (or no member)
      MemoryRow row = sweep.row();
      row.slack = room;
      auto [it, fresh] = same.emplace(std::make_pair(row.vars, row.usage), rows_.size());
      if (fresh) {
        rows_.push_back(std::move(row));
      } else {
        rows_[it->second].slack = std::min(rows_[it->second].slack, room);
      }
    }
  }

  // The region variables' usages stretch by stretch: per variable the sum
  // of its node's pieces that cover the stretch, with its most and its
  // incumbent's usage, updated only where a piece starts or ends.
  class StretchSweep {
   public:
    StretchSweep(const RegionBnb& bnb, const std::vector<int>& cuts)
        : bnb_(bnb), events_(cuts.size()), sum_(bnb.k_), most_(bnb.k_, 0), now_(bnb.k_, 0) {
      auto index = [&](int slot) { return std::lower_bound(cuts.begin(), cuts.end(), slot) - cuts.begin(); };
      for (int i = 0; i < bnb.k_; ++i) {
        const int u = bnb.region_[i];
        sum_[i].assign(bnb.search_.folded().kernel.nodes[u].size(), 0);
        for (const auto& p : bnb.search_.folded().pieces[u]) {
          events_[index(p.from)].push_back({i, &p, 1});
          events_[index(p.to)].push_back({i, &p, -1});
        }
      }
    }

    // Applies the pieces that start or end at cut c.
    void advance_to(std::size_t c) {
      for (const Event& e : events_[c]) {
        const int i = e.var;
        for (std::size_t s = 0; s < sum_[i].size(); ++s) sum_[i][s] += e.sign * e.piece->usages[s];
        total_most_ -= most_[i];
        total_now_ -= now_[i];
        most_[i] = *std::max_element(sum_[i].begin(), sum_[i].end());
        now_[i] = sum_[i][bnb_.search_.assignment()[bnb_.region_[i]]];
        total_most_ += most_[i];
        total_now_ += now_[i];
        if (most_[i] != 0) {
          members_.insert(i);
        } else {
          members_.erase(i);
        }
      }
    }

    int64_t most() const { return total_most_; }  // the members' most usages summed
    int64_t now() const { return total_now_; }     // the members' incumbent usages summed

    // The stretch's row: its members (usage not zero everywhere) in order, with their usages.
    MemoryRow row() const {
      MemoryRow out;
      for (int i : members_) {
        out.vars.push_back(i);
        out.usage.push_back(sum_[i]);
      }
      return out;
    }

   private:
    struct Event {
      int var = 0;                        // the region variable
      const UsagePiece* piece = nullptr;  // the piece of its node that starts or ends
      int sign = 0;                       // +1: starts, -1: ends
    };

    const RegionBnb& bnb_;
    std::vector<std::vector<Event>> events_;  // per cut: pieces starting or ending there
    std::vector<std::vector<int64_t>> sum_;   // per variable and strategy: usage on the current stretch
    std::vector<int64_t> most_;               // per variable: its most usage there
    std::vector<int64_t> now_;                // per variable: the incumbent's usage there
    std::set<int> members_;                   // variables whose usage there is not zero everywhere
    int64_t total_most_ = 0;
    int64_t total_now_ = 0;
  };

  // Drops values too heavy for a row with every other member at its
  // lightest, until nothing changes; sets each row's slack to the room
  // beyond every member at its lightest.
  void prune_by_rows() {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& row : rows_) {
        int64_t lightest_sum = 0;
        row.lightest.assign(row.vars.size(), 0);
        for (std::size_t m = 0; m < row.vars.size(); ++m) {
          row.lightest[m] = lightest_live(row.vars[m], row.usage[m]);
          lightest_sum += row.lightest[m];
        }
        for (std::size_t m = 0; m < row.vars.size(); ++m) {
          auto& alive = alive_[row.vars[m]];
          for (std::size_t s = 0; s < alive.size(); ++s) {
            if (alive[s] && row.usage[m][s] - row.lightest[m] > row.slack - lightest_sum) alive[s] = 0, changed = true;
          }
        }
      }
    }
    for (auto& row : rows_) {
      for (int64_t l : row.lightest) row.slack -= l;
    }
  }

  int64_t lightest_live(int i, const std::vector<int64_t>& use) const {
    int64_t least = INT64_MAX;
    for (std::size_t s = 0; s < use.size(); ++s) {
      if (alive_[i][s]) least = std::min(least, use[s]);
    }
    return least == INT64_MAX ? 0 : least;
  }

  // Forbidden pairs of the region's edges: a value without an allowed
  // partner among the other end's live values is dropped, until nothing changes.
  void make_arc_consistent() {
    const Problem& kernel = search_.folded().kernel;
    std::vector<std::vector<Incidence>> inner(k_);
    for (int i = 0; i < k_; ++i) {
      for (const auto& inc : search_.incidences()[region_[i]]) {
        if (local_[inc.other] >= 0) inner[i].push_back(inc);
      }
    }
    std::vector<int> queue(k_);
    std::vector<char> queued(k_, 1);
    for (int i = 0; i < k_; ++i) queue[i] = i;
    while (!queue.empty()) {
      const int j = queue.back();  // j's values changed: revise its neighbours
      queue.pop_back();
      queued[j] = 0;
      for (const auto& inc : inner[j]) {
        const int i = local_[inc.other];
        if (!revise(i, j, kernel.edges[inc.edge], !inc.is_from) || queued[i]) continue;
        queued[i] = 1;
        queue.push_back(i);
      }
    }
  }

  // Drops i's values without an allowed partner among j's live values on
  // `edge` (i is its `from` when `i_is_from`). Returns whether any went.
  bool revise(int i, int j, const ProblemEdge& edge, bool i_is_from) {
    const std::size_t cols = search_.folded().kernel.nodes[edge.to].costs.size();
    bool dropped = false;
    for (std::size_t a = 0; a < alive_[i].size(); ++a) {
      if (!alive_[i][a]) continue;
      bool partner = false;
      for (std::size_t b = 0; b < alive_[j].size() && !partner; ++b) {
        partner = alive_[j][b] && (i_is_from ? edge.costs[a * cols + b] : edge.costs[b * cols + a]) < kForbidden;
      }
      if (!partner) alive_[i][a] = 0, dropped = true;
    }
    return dropped;
  }

  // Renumbers each variable's live strategies 0, 1, ... (its values), and
  // builds the region's edges and rows on them.
  void compress() {
    const Problem& kernel = search_.folded().kernel;
    values_.resize(k_);
    h_.resize(k_);
    for (int i = 0; i < k_; ++i) {
      for (std::size_t s = 0; s < alive_[i].size(); ++s) {
        if (!alive_[i][s]) continue;
        values_[i].push_back(static_cast<int>(s));
        h_[i].push_back(unary_[i][s]);
      }
    }
    arcs_.resize(k_);
    for (int i = 0; i < k_; ++i) {
      for (const auto& inc : search_.incidences()[region_[i]]) {
        if (!inc.is_from || local_[inc.other] < 0) continue;
        const int j = local_[inc.other];
        const auto& e = kernel.edges[inc.edge];
        const std::size_t cols = kernel.nodes[e.to].costs.size();
        LocalEdge le{i, j, static_cast<int>(values_[j].size()), {}};
        for (int s : values_[i]) {
          for (int t : values_[j]) le.costs.push_back(e.costs[s * cols + t]);
        }
        arcs_[i].push_back({static_cast<int>(edges_.size()), j, true});
        arcs_[j].push_back({static_cast<int>(edges_.size()), i, false});
        edges_.push_back(std::move(le));
      }
    }
    compress_rows();
  }

  // Rows on the values: members whose usage no longer varies leave the row
  // (their lightest is already out of its slack).
  void compress_rows() {
    memberships_.resize(k_);
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      MemoryRow& row = rows_[r];
      MemoryRow kept;
      kept.slack = row.slack;
      for (std::size_t m = 0; m < row.vars.size(); ++m) {
        const int i = row.vars[m];
        std::vector<int64_t> use;
        for (int s : values_[i]) use.push_back(row.usage[m][s] - row.lightest[m]);
        if (*std::max_element(use.begin(), use.end()) == 0) continue;
        memberships_[i].push_back({static_cast<int>(r), static_cast<int>(kept.vars.size())});
        kept.vars.push_back(i);
        kept.usage.push_back(std::move(use));
      }
      row = std::move(kept);
    }
  }

  // Sequential message passing over the region's own edges (TRW-S on the
  // pairwise part): sweeps forwards and backwards over the variables; each
  // variable collects its edges' min-marginals and sends a share of its
  // costs on along its edges to the variables later in the sweep. Every
  // step moves the same amount out of one table as into another, so every
  // assignment keeps its region cost, and project_edges() afterwards
  // gathers what the edges still hold into their ends. The bound at the
  // search's nodes (each free variable's cheapest value) then sees the
  // whole region instead of each edge alone.
  void pass_messages() {
    if (edges_.empty()) return;
    std::vector<int> position(k_);
    // On wide tables (the contest's S has 872 x 538) the sweeps would eat
    // the search's budget: they stop once they have used a quarter of it.
    for (int sweep = 0; sweep < kMessageSweeps && (max_work_ == 0 || work_ < max_work_ / 4); ++sweep) {
      const bool forward = sweep % 2 == 0;
      for (int k = 0; k < k_; ++k) position[forward ? k : k_ - 1 - k] = k;
      for (int k = 0; k < k_; ++k) {
        const int u = forward ? k : k_ - 1 - k;
        for (const auto& arc : arcs_[u]) {
          work_ += static_cast<long>(values_[u].size()) * static_cast<long>(values_[arc.other].size());
          collect(u, arc);
        }
        send_later(u, position);
      }
    }
  }

  // Moves each of u's values' least entries on `arc`'s edge into u's
  // costs (a value without an allowed partner becomes forbidden; none is
  // left after make_arc_consistent()).
  void collect(int u, const Arc& arc) {
    LocalEdge& e = edges_[arc.edge];
    const int own = static_cast<int>(values_[u].size());
    const int other = static_cast<int>(values_[arc.other].size());
    for (int v = 0; v < own; ++v) {
      int64_t least = kForbidden;
      for (int w = 0; w < other; ++w) least = std::min(least, entry(e, arc.is_a, v, w));
      if (least == 0) continue;
      for (int w = 0; w < other; ++w) lower(entry(e, arc.is_a, v, w), least);
      h_[u][v] = cost_add(h_[u][v], least);
    }
  }

  // Sends u's costs above its cheapest value, in equal shares, into its
  // edges to variables later in the sweep (the share: one over the larger
  // of its earlier and later neighbour counts, as TRW-S's weights).
  void send_later(int u, const std::vector<int>& position) {
    int later = 0;
    for (const auto& arc : arcs_[u]) later += position[arc.other] > position[u] ? 1 : 0;
    if (later == 0) return;
    const int share = std::max(later, static_cast<int>(arcs_[u].size()) - later);
    const int own = static_cast<int>(values_[u].size());
    const int64_t low = *std::min_element(h_[u].begin(), h_[u].end());
    for (const auto& arc : arcs_[u]) {
      if (position[arc.other] < position[u]) continue;
      LocalEdge& e = edges_[arc.edge];
      const int other = static_cast<int>(values_[arc.other].size());
      work_ += static_cast<long>(own) * other;
      for (int v = 0; v < own; ++v) {
        const int64_t part = (h_[u][v] - low) / share;
        if (part == 0) continue;
        for (int w = 0; w < other; ++w) raise(entry(e, arc.is_a, v, w), part);
        h_[u][v] -= part;
      }
    }
  }

  // Entry (u's value v, the other end's value w) of an edge seen from u.
  static int64_t& entry(LocalEdge& e, bool u_is_a, int v, int w) {
    return u_is_a ? e.costs[static_cast<std::size_t>(v) * e.cols + w] : e.costs[static_cast<std::size_t>(w) * e.cols + v];
  }

  // Raises an allowed entry by `amount`; a forbidden one stays forbidden.
  static void raise(int64_t& entry, int64_t amount) {
    if (entry < kForbidden) entry += amount;
  }

  // Moves each edge's row minima onto its `a` end and then its column
  // minima onto its `b` end; residual costs are at least zero. It is
  // not counted in the budget (it never was).
  void project_edges() {
    for (int e = 0; e < static_cast<int>(edges_.size()); ++e) {
      collect(edges_[e].a, {e, edges_[e].b, true});
      collect(edges_[e].b, {e, edges_[e].a, false});
    }
  }

  // Lowers an allowed entry by `amount` (an allowed least of its line).
  static void lower(int64_t& entry, int64_t amount) {
    if (entry < kForbidden && amount < kForbidden) entry -= amount;
  }

  // The incumbent's region cost on the projected costs: the bound to beat.
  void incumbent_cost() {
    current_.resize(k_);
    for (int i = 0; i < k_; ++i) {
      const int s = search_.assignment()[region_[i]];
      current_[i] = static_cast<int>(std::find(values_[i].begin(), values_[i].end(), s) - values_[i].begin());
    }
    ub_ = 0;
    for (int i = 0; i < k_; ++i) ub_ = cost_add(ub_, h_[i][current_[i]]);
    for (const auto& e : edges_) ub_ = cost_add(ub_, e.costs[current_[e.a] * e.cols + current_[e.b]]);
    live_.assign(k_, {});
    count_.resize(k_);
    for (int i = 0; i < k_; ++i) {
      live_[i].assign(values_[i].size(), 1);
      count_[i] = static_cast<int>(values_[i].size());
    }
    assigned_.assign(k_, 0);
  }

  // Each variable's cheapest value summed: what every region assignment
  // costs at least (the edges' residuals are at least zero).
  int64_t root_bound() const {
    int64_t bound = 0;
    for (const auto& h : h_) bound = cost_add(bound, *std::min_element(h.begin(), h.end()));
    return bound;
  }

  // ---- the search ----

  bool out_of_time() const { return (deadline_ && Clock::now() >= *deadline_) || interrupt_requested(); }

  void dfs(int depth) {
    if (depth == k_) {
      ub_ = g_;
      best_ = current_;
      found_ = true;
      return;
    }
    ++visits_;
    if ((max_work_ > 0 && work_ > max_work_) || (visits_ % 256 == 0 && out_of_time())) {
      aborted_ = true;
      return;
    }
    int64_t rest = 0;
    const int v = choose(rest);
    std::vector<int>& order = depth_values_[depth];
    order.clear();
    for (int d = 0; d < static_cast<int>(values_[v].size()); ++d) {
      if (live_[v][d] && cost_add(cost_add(g_, rest), h_[v][d]) < ub_) order.push_back(d);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return h_[v][a] < h_[v][b]; });
    for (int d : order) {
      if (cost_add(cost_add(g_, rest), h_[v][d]) >= ub_) break;  // the bound fell since
      if (!fits(v, d)) continue;
      const std::size_t mark = saved_.size();
      if (assign(v, d)) dfs(depth + 1);
      unassign(v, d, mark);
      if (aborted_) return;
    }
  }

  // The free variable with the fewest values left (ties: the lower
  // index); `rest` gets the other free variables' cheapest values summed.
  int choose(int64_t& rest) {
    int best = -1;
    int64_t total = 0, best_least = 0;
    for (int i = 0; i < k_; ++i) {
      if (assigned_[i]) continue;
      work_ += static_cast<long>(h_[i].size());
      int64_t least = kForbidden;
      for (std::size_t d = 0; d < h_[i].size(); ++d) {
        if (live_[i][d]) least = std::min(least, h_[i][d]);
      }
      total = cost_add(total, least);
      if (best < 0 || count_[i] < count_[best]) best = i, best_least = least;
    }
    rest = total >= kForbidden ? kForbidden : total - best_least;
    return best;
  }

  // Whether every row of v keeps room for value d.
  bool fits(int v, int d) {
    work_ += static_cast<long>(memberships_[v].size());
    for (const auto& m : memberships_[v]) {
      if (rows_[m.row].usage[m.member][d] > rows_[m.row].slack) return false;
    }
    return true;
  }

  // Assigns v = d: its rows lose the room, its free neighbours get its
  // edges' residual costs and lose their values forbidden against d.
  // Returns false when a neighbour is left without values.
  bool assign(int v, int d) {
    assigned_[v] = 1;
    current_[v] = d;
    g_ = cost_add(g_, h_[v][d]);
    for (const auto& m : memberships_[v]) rows_[m.row].slack -= rows_[m.row].usage[m.member][d];
    work_ += static_cast<long>(memberships_[v].size());
    bool ok = true;
    for (const auto& arc : arcs_[v]) {
      const int j = arc.other;
      if (assigned_[j]) continue;
      save(j);
      work_ += static_cast<long>(values_[j].size());
      const LocalEdge& e = edges_[arc.edge];
      for (int w = 0; w < static_cast<int>(values_[j].size()); ++w) {
        if (!live_[j][w]) continue;
        const int64_t c = arc.is_a ? e.costs[d * e.cols + w] : e.costs[w * e.cols + d];
        if (c >= kForbidden) {
          live_[j][w] = 0;
          --count_[j];
        } else {
          h_[j][w] += c;
        }
      }
      if (count_[j] == 0) {
        ok = false;
        break;
      }
    }
    return ok;
  }

  void unassign(int v, int d, std::size_t mark) {
    while (saved_.size() > mark) {
      const Saved& s = saved_.back();
      std::copy(saved_h_.begin() + s.offset, saved_h_.end(), h_[s.var].begin());
      std::copy(saved_live_.begin() + s.offset, saved_live_.end(), live_[s.var].begin());
      count_[s.var] = s.count;
      saved_h_.resize(s.offset);
      saved_live_.resize(s.offset);
      saved_.pop_back();
    }
    for (const auto& m : memberships_[v]) rows_[m.row].slack += rows_[m.row].usage[m.member][d];
    g_ -= h_[v][d];
    assigned_[v] = 0;
  }

  void save(int j) {
    saved_.push_back({j, saved_h_.size(), count_[j]});
    saved_h_.insert(saved_h_.end(), h_[j].begin(), h_[j].end());
    saved_live_.insert(saved_live_.end(), live_[j].begin(), live_[j].end());
  }

  // Applies the best region assignment; returns whether it keeps the limit
  // (always, as the rows are exact) and costs less.
  bool apply() {
    const Assignment before = search_.assignment();
    const int64_t cost_before = search_.cost();
    for (int i = 0; i < k_; ++i) search_.move(region_[i], values_[i][best_[i]], true);
    if (search_.feasible() && search_.cost() < cost_before) return true;
    for (int i = 0; i < k_; ++i) search_.move(region_[i], before[region_[i]], true);
    return false;
  }

  LocalSearch& search_;
  const std::vector<int>& region_;
  const long max_work_;
  const std::optional<Clock::time_point> deadline_;
  const int k_;                                  // region variables
  std::vector<int> local_;                       // per kernel node: its variable, -1 outside the region
  std::vector<std::vector<int64_t>> unary_;      // per variable and strategy: cost with the fixed neighbours
  std::vector<std::vector<char>> alive_;         // per variable and strategy: not yet dropped (before compress)
  std::vector<std::vector<int>> values_;         // per variable: its live strategies (its values)
  std::vector<std::vector<int64_t>> h_;          // per variable and value: projected cost plus residuals to assigned neighbours
  std::vector<std::vector<char>> live_;          // per variable and value: not dropped by forward checking
  std::vector<int> count_;                       // per variable: live values
  std::vector<LocalEdge> edges_;                 // the region's own edges
  std::vector<std::vector<Arc>> arcs_;           // per variable: its edges
  std::vector<MemoryRow> rows_;                  // memory rows that could bind
  std::vector<std::vector<Membership>> memberships_;  // per variable: its rows
  std::vector<char> assigned_;                   // per variable: assigned on the current path
  std::vector<int> current_;                     // per variable: its value on the current path
  std::vector<int> best_;                        // per variable: its value in the best assignment found
  std::vector<std::vector<int>> depth_values_;   // per depth: the values to try, cheapest first
  std::vector<Saved> saved_;                     // backtracking: saved variables, innermost last
  std::vector<int64_t> saved_h_;                 // their saved costs
  std::vector<char> saved_live_;                 // their saved live flags
  int64_t g_ = 0;                                // projected cost of the assigned variables
  int64_t ub_ = kForbidden;                      // the region cost to beat
  long visits_ = 0;
  long work_ = 0;                                // values and row memberships scanned: the budget's unit
  bool found_ = false;
  bool aborted_ = false;
};

}  // namespace

BnbOutcome solve_region_bnb(LocalSearch& search, const std::vector<int>& region, long max_work,
                            std::optional<std::chrono::steady_clock::time_point> deadline) {
  return RegionBnb(search, region, max_work, deadline).run();
}

}  // namespace shardsynth::synth
