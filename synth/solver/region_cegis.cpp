#include "synth/solver/region_cegis.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>

#include <z3++.h>

#include "synth/solver/edge_classes.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/z3_deadline.hpp"
#include "synth/solver/z3_encoding.hpp"

namespace shardsynth::synth {
namespace {

// One memory row of a region: region strategies' usage on a stretch of slots.
struct Row {
  std::vector<std::pair<int, int>> picks;  // (region node, strategy) with nonzero usage
  std::vector<int64_t> usages;             // their usage on the stretch
  int64_t room = 0;                        // what the fixed nodes leave of the limit there
};

// Sum of coefficients times literals at most `room`, exactly: all divided by
// their greatest common divisor (the room rounded down), as a pseudo-Boolean
// row when that fits Z3's int coefficients and an integer sum otherwise.
z3::expr at_most(z3::context& ctx, const z3::expr_vector& literals, std::vector<int64_t> weights, int64_t room) {
  if (room < 0) return ctx.bool_val(false);
  int64_t g = 0;
  for (int64_t w : weights) g = std::gcd(g, w);
  if (g > 1) {
    for (int64_t& w : weights) w /= g;
    room /= g;
  }
  for (int64_t& w : weights) w = std::min(w, room + 1);  // heavier than the room: decides alone
  if (room <= INT32_MAX) {
    std::vector<int> small(weights.begin(), weights.end());
    return z3::pble(literals, small.data(), static_cast<int>(room));
  }
  z3::expr_vector terms(ctx);
  for (unsigned k = 0; k < literals.size(); ++k) terms.push_back(z3::ite(literals[k], ctx.int_val(weights[k]), ctx.int_val(0)));
  return z3::sum(terms) <= ctx.int_val(room);
}

// Z3's resource units the solver's context has spent so far.
uint64_t rlimit_spent(const z3::solver& solver) {
  const z3::stats stats = solver.statistics();
  for (unsigned k = 0; k < stats.size(); ++k) {
    if (stats.key(k) != "rlimit count") continue;
    return stats.is_uint(k) ? stats.uint_value(k) : static_cast<uint64_t>(stats.double_value(k));
  }
  return 0;
}

// The resource limit of the next check (0 = none), or nothing once the
// region's checks have spent their total.
std::optional<unsigned> next_check_rlimit(const z3::solver& solver, RegionRlimit rlimit) {
  if (rlimit.total == 0) return rlimit.per_check;
  const uint64_t spent = rlimit_spent(solver);
  if (spent >= rlimit.total) return std::nullopt;
  const uint64_t left = rlimit.total - spent;
  const uint64_t most = rlimit.per_check > 0 ? rlimit.per_check : UINT32_MAX;
  return static_cast<unsigned>(std::min(left, most));
}

}  // namespace

std::vector<int> grow_region(const Problem& kernel, const std::vector<std::vector<Incidence>>& incidences, int seed, int size,
                             std::mt19937_64& rng) {
  std::vector<int> region{seed};
  std::vector<char> in(kernel.nodes.size(), 0);
  in[seed] = 1;
  std::vector<int> next;
  const int n = static_cast<int>(kernel.nodes.size());
  for (std::size_t k = 0; static_cast<int>(region.size()) < std::min(size, n); ++k) {
    if (k == region.size()) {  // this component is used up: go on from a random node outside
      int restart = static_cast<int>(rng() % static_cast<uint64_t>(n));
      while (in[restart]) restart = (restart + 1) % n;
      in[restart] = 1;
      region.push_back(restart);
      continue;
    }
    next.clear();
    for (const auto& inc : incidences[region[k]]) {
      if (!in[inc.other]) next.push_back(inc.other);
    }
    std::shuffle(next.begin(), next.end(), rng);
    for (int v : next) {
      if (static_cast<int>(region.size()) >= size) break;
      if (in[v]) continue;
      in[v] = 1;
      region.push_back(v);
    }
  }
  std::sort(region.begin(), region.end());
  return region;
}

RegionOutcome improve_region(LocalSearch& search, const std::vector<int>& region, RegionRlimit rlimit,
                             std::optional<std::chrono::steady_clock::time_point> deadline) {
  const FoldedProblem& folded = search.folded();
  const Problem& kernel = folded.kernel;
  const auto& incidences = search.incidences();
  const Assignment& x = search.assignment();
  RegionOutcome out;
  out.nodes = static_cast<int>(region.size());
  out.cost = search.cost();
  std::vector<int> local(kernel.nodes.size(), -1);
  for (std::size_t k = 0; k < region.size(); ++k) local[region[k]] = static_cast<int>(k);
  // The region as a plain problem: outside edges folded into node costs.
  Problem sub;
  for (int u : region) {
    ProblemNode node;
    for (int s = 0; s < kernel.nodes[u].size(); ++s) {
      int64_t c = kernel.nodes[u].costs[s];
      for (const auto& inc : incidences[u]) {
        if (local[inc.other] >= 0) continue;
        const auto& e = kernel.edges[inc.edge];
        const std::size_t cols = kernel.nodes[e.to].costs.size();
        c = cost_add(c, inc.is_from ? e.costs[s * cols + x[inc.other]] : e.costs[x[inc.other] * cols + s]);
      }
      node.costs.push_back(c);
    }
    sub.nodes.push_back(std::move(node));
  }
  long terms = 0;  // the edges' encoded terms, then binding row terms too
  // Counts `more` terms; true once the encoding passes kMaxEncodedTerms.
  auto too_large = [&](std::size_t more) {
    terms += static_cast<long>(more);
    out.too_large = terms > kMaxEncodedTerms;
    return out.too_large;
  };
  std::vector<std::vector<bool>> banned;
  for (const auto& node : sub.nodes) banned.push_back(banned_strategies(node));
  for (const auto& e : kernel.edges) {
    if (local[e.from] < 0 || local[e.to] < 0) continue;
    sub.edges.push_back({local[e.from], local[e.to], e.costs});
    const ProblemEdge& added = sub.edges.back();
    if (too_large(encoded_terms(edge_classes(sub, added, banned[added.from], banned[added.to])))) return out;
  }
  Assignment current(region.size());
  for (std::size_t k = 0; k < region.size(); ++k) current[k] = x[region[k]];
  int64_t current_cost = cost_without_usage(sub, current);
  // Memory rows: stretches between consecutive piece ends of the region.
  std::vector<Row> rows;
  if (folded.usage_limit) {
    std::vector<int> cuts;
    for (int u : region) {
      for (const auto& p : folded.pieces[u]) cuts.push_back(p.from), cuts.push_back(p.to);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::map<std::vector<std::pair<int, int>>, std::size_t> same;  // row literals -> row, keeping the least room
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      const int from = cuts[c], to = cuts[c + 1];
      Row row;
      int64_t mine_now = 0, mine_most = 0;
      for (int u : region) {
        std::vector<int64_t> use(kernel.nodes[u].size(), 0);
        for (const auto& p : folded.pieces[u]) {
          if (p.from <= from && to <= p.to) {
            for (std::size_t s = 0; s < use.size(); ++s) use[s] += p.usages[s];
          }
        }
        mine_now += use[x[u]];
        mine_most += *std::max_element(use.begin(), use.end());
        for (int s = 0; s < static_cast<int>(use.size()); ++s) {
          if (use[s] != 0) row.picks.push_back({local[u], s}), row.usages.push_back(use[s]);
        }
      }
      if (row.picks.empty()) continue;
      row.room = *folded.usage_limit - (search.profile().max(from, to) - mine_now);
      if (mine_most <= row.room) continue;  // cannot bind
      if (too_large(row.picks.size())) return out;
      auto [it, fresh] = same.emplace(row.picks, rows.size());
      if (fresh) {
        rows.push_back(std::move(row));
      } else if (row.room < rows[it->second].room) {
        // Same literals, different usages possible only on equal coverage: keep both unless identical.
        if (rows[it->second].usages == row.usages) {
          rows[it->second].room = row.room;
        } else {
          rows.push_back(std::move(row));
        }
      }
    }
  }
  z3::context ctx;
  InterruptGuard guard(ctx);  // SIGINT interrupts the check (interrupt.hpp)
  Z3Encoding encoding(ctx, sub, EncodingKind::pseudo_boolean);
  z3::solver solver(ctx);
  z3::params params(ctx);
  params.set("random_seed", 0u);
  params.set("ctrl_c", false);
  solver.set(params);
  solver.add(encoding.constraints());
  for (const auto& row : rows) {
    z3::expr_vector literals(ctx);
    for (const auto& [k, s] : row.picks) literals.push_back(encoding.picks(k, s));
    solver.add(at_most(ctx, literals, row.usages, row.room));
  }
  for (;;) {
    const std::optional<unsigned> limit = next_check_rlimit(solver, rlimit);
    if (!limit) break;  // the region's checks have spent their total
    if (*limit > 0) {
      params.set("rlimit", *limit);
      solver.set(params);
    }
    solver.add(encoding.below(current_cost));
    ++out.checks;
    z3::check_result answer = z3::unknown;
    {
      const Z3Deadline watch(ctx, deadline);
      answer = solver.check();
    }
    if (answer == z3::unsat) {
      out.proven = true;
      break;
    }
    if (answer != z3::sat) break;
    const Assignment found = encoding.decode(solver.get_model());
    const int64_t found_cost = cost_without_usage(sub, found);
    if (found_cost >= current_cost) break;  // never expected: the encoding is exact
    // Apply it; the rows make it keep the limit, and the profile checks it.
    const Assignment before = search.assignment();
    for (std::size_t k = 0; k < region.size(); ++k) search.move(region[k], found[k], true);
    if (!search.feasible()) {
      for (std::size_t k = 0; k < region.size(); ++k) search.move(region[k], before[region[k]], true);
      break;
    }
    current = found;
    current_cost = found_cost;
    out.improved = true;
  }
  out.cost = search.cost();
  return out;
}

}  // namespace shardsynth::synth
