#include "synth/solver/network_regions.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>

#include "synth/solver/interrupt.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMinSize = 8;  // the fewest variables a region shrinks to

// What building a region needs of the whole network, kept across regions.
struct NetworkIndex {
  std::vector<std::vector<int>> edges_of;  // per variable: its edges (indices into the network's edges)
  std::vector<std::vector<std::pair<int, int>>> rows_of;  // per variable: (row, member index) of each row holding it
};

NetworkIndex index_of(const NetworkInput& input) {
  NetworkIndex index;
  const std::size_t n = input.network.nodes.size();
  index.edges_of.resize(n);
  for (std::size_t e = 0; e < input.network.edges.size(); ++e) {
    const ProblemEdge& edge = input.network.edges[e];
    index.edges_of[edge.from].push_back(static_cast<int>(e));
    if (edge.to != edge.from) index.edges_of[edge.to].push_back(static_cast<int>(e));
  }
  index.rows_of.resize(n);
  for (std::size_t r = 0; r < input.rows.size(); ++r) {
    for (std::size_t m = 0; m < input.rows[r].vars.size(); ++m) {
      index.rows_of[input.rows[r].vars[m]].emplace_back(static_cast<int>(r), static_cast<int>(m));
    }
  }
  return index;
}

// Per row: the bytes its members take under `plan`.
std::vector<int64_t> usage_of(const NetworkInput& input, const Assignment& plan) {
  std::vector<int64_t> used(input.rows.size(), 0);
  for (std::size_t r = 0; r < input.rows.size(); ++r) {
    const KnapsackRow& row = input.rows[r];
    for (std::size_t m = 0; m < row.vars.size(); ++m) used[r] += row.weights[m][plan[row.vars[m]]];
  }
  return used;
}

// Whether the members [begin, end) of `members` (one row's, by region
// variable) are `kept`'s, with the same weights.
bool same_members(const NetworkInput& input, const std::vector<std::array<int, 3>>& members, std::size_t begin,
                  std::size_t end, const KnapsackRow& kept) {
  if (kept.vars.size() != end - begin) return false;
  const KnapsackRow& row = input.rows[members[begin][0]];
  for (std::size_t j = begin; j < end; ++j) {
    if (kept.vars[j - begin] != members[j][1]) return false;
    if (kept.weights[j - begin] != row.weights[members[j][2]]) return false;
  }
  return true;
}

// The region's own network: its variables (`vars`), the edges to the
// others folded into their unary costs at `plan`'s values, and each row
// that holds one of them with the room the others leave (rows that cannot
// overflow dropped). Its score puts a region plan into `plan`.
NetworkInput region_of(const NetworkInput& input, const NetworkIndex& index, const std::vector<int64_t>& used,
                       const Assignment& plan, const std::vector<int>& vars) {
  const Problem& whole = input.network;
  std::vector<int> at(whole.nodes.size(), -1);
  for (std::size_t k = 0; k < vars.size(); ++k) at[vars[k]] = static_cast<int>(k);
  NetworkInput region;
  int64_t outside = 0;  // the network cost of the fixed part at `plan`, region nodes and edges aside
  for (std::size_t i = 0; i < whole.nodes.size(); ++i) {
    if (at[i] < 0) outside = cost_add(outside, whole.nodes[i].costs[plan[i]]);
  }
  for (const int v : vars) {
    ProblemNode node;
    node.costs = whole.nodes[v].costs;
    region.network.nodes.push_back(std::move(node));
  }
  for (const ProblemEdge& edge : whole.edges) {
    const int a = at[edge.from], b = at[edge.to];
    const int columns = whole.nodes[edge.to].size();
    if (a < 0 && b < 0) {
      outside = cost_add(outside, edge.costs[plan[edge.from] * columns + plan[edge.to]]);
    } else if (a >= 0 && b >= 0) {
      region.network.edges.push_back({a, b, edge.costs});
    } else if (a >= 0) {
      auto& costs = region.network.nodes[a].costs;
      for (std::size_t v = 0; v < costs.size(); ++v) costs[v] = cost_add(costs[v], edge.costs[v * columns + plan[edge.to]]);
    } else {
      auto& costs = region.network.nodes[b].costs;
      for (std::size_t v = 0; v < costs.size(); ++v) costs[v] = cost_add(costs[v], edge.costs[plan[edge.from] * columns + v]);
    }
  }
  // (row, region variable, member index) of each region variable in each row, by row
  std::vector<std::array<int, 3>> members;
  for (std::size_t k = 0; k < vars.size(); ++k) {
    for (const auto& [r, m] : index.rows_of[vars[k]]) members.push_back({r, static_cast<int>(k), m});
  }
  std::sort(members.begin(), members.end());
  for (std::size_t begin = 0, end = 0; begin < members.size(); begin = end) {
    const int r = members[begin][0];
    const KnapsackRow& row = input.rows[r];
    int64_t capacity = row.capacity - used[r];
    int64_t heaviest = 0;
    for (end = begin; end < members.size() && members[end][0] == r; ++end) {
      const auto& weights = row.weights[members[end][2]];
      capacity += weights[plan[vars[members[end][1]]]];
      heaviest += *std::max_element(weights.begin(), weights.end());
    }
    if (heaviest <= capacity) continue;  // cannot overflow
    if (!region.rows.empty() && same_members(input, members, begin, end, region.rows.back())) {
      region.rows.back().capacity = std::min(region.rows.back().capacity, capacity);
      continue;
    }
    KnapsackRow part;
    part.step = row.step;
    part.capacity = capacity;
    for (std::size_t j = begin; j < end; ++j) {
      part.vars.push_back(members[j][1]);
      part.weights.push_back(row.weights[members[j][2]]);
    }
    region.rows.push_back(std::move(part));
  }
  region.offset = cost_add(input.offset, outside);
  region.score = [&input, plan, vars](const Assignment& part) {
    Assignment full = plan;
    for (std::size_t k = 0; k < vars.size(); ++k) full[vars[k]] = part[k];
    return input.score(full);
  };
  return region;
}

// Up to `size` more variables into `vars`, breadth first from `root` over
// the network's edges, each variable's neighbours in a random order; where
// the root's component runs out, from the next variable not taken yet.
void grow(const Problem& network, const NetworkIndex& index, int root, int size, std::mt19937_64& rng,
          std::vector<char>& taken, std::vector<int>& vars) {
  const int n = static_cast<int>(network.nodes.size());
  std::vector<int> queue = {root};
  int added = 0;
  for (std::size_t at = 0; added < size; ++at) {
    if (at == queue.size()) {  // the component is exhausted: go on from the next free variable after the root
      int next = -1;
      for (int k = 1; k < n && next < 0; ++k) {
        if (!taken[(root + k) % n]) next = (root + k) % n;
      }
      if (next < 0) return;
      queue.push_back(next);
    }
    const int v = queue[at];
    if (taken[v]) continue;
    taken[v] = 1;
    vars.push_back(v);
    ++added;
    std::vector<int> around;
    for (const int e : index.edges_of[v]) {
      const ProblemEdge& edge = network.edges[e];
      around.push_back(edge.from == v ? edge.to : edge.from);
    }
    std::shuffle(around.begin(), around.end(), rng);
    for (const int w : around) {
      if (!taken[w]) queue.push_back(w);
    }
  }
}

// A member of the row with the least room under the incumbent, or -1
// without rows.
int fullest_row_member(const NetworkInput& input, const std::vector<int64_t>& used, std::mt19937_64& rng) {
  int fullest = -1;
  for (std::size_t r = 0; r < input.rows.size(); ++r) {
    const int64_t room = input.rows[r].capacity - used[r];
    if (fullest < 0 || room < input.rows[fullest].capacity - used[fullest]) fullest = static_cast<int>(r);
  }
  if (fullest < 0 || input.rows[fullest].vars.empty()) return -1;
  const auto& vars = input.rows[fullest].vars;
  return vars[rng() % vars.size()];
}

// Mixed into the seed for each worker's random stream after the first.
constexpr uint64_t kWorkerStream = 0x9e3779b97f4a7c15ULL;

// What the workers share: the best plan so far and the run's counts.
struct Shared {
  Assignment plan;               // the best plan so far
  int64_t cost;                  // its score
  std::mutex mutex;              // guards plan, cost and the run's fields
  std::atomic<long> regions{0};  // regions begun by all workers

  // Past the deadline, on an interrupt, or with max_regions begun.
  bool done(const NetworkRegionOptions& options) const {
    return (options.deadline && Clock::now() >= *options.deadline) || interrupt_requested() ||
           (options.max_regions > 0 && regions.load() >= options.max_regions);
  }
};

// One worker's own state: the plan its regions start from and its stream.
struct Worker {
  Assignment plan;              // the plan its next region starts from
  int64_t cost;                 // its score
  std::vector<int64_t> used;    // per row: the bytes its members take under `plan`
  std::mt19937_64 rng;          // its regions' random stream
  int size;                     // variables of its next region
};

// A cheaper plan another worker found becomes this worker's start.
void adopt_shared(const NetworkInput& input, Shared& shared, Worker& self) {
  std::lock_guard<std::mutex> lock(shared.mutex);
  if (shared.cost >= self.cost) return;
  self.plan = shared.plan;
  self.cost = shared.cost;
  self.used = usage_of(input, self.plan);
}

// Grows one region around the worker's plan, searches it and takes what it
// found: a cheaper plan is the worker's, and the run's when no worker has
// a cheaper one; the size adapts to the outcome.
void search_one_region(const NetworkInput& input, const NetworkIndex& index, const NetworkRegionOptions& options,
                       Shared& shared, Worker& self, NetworkRegionRun& run) {
  const int variables = static_cast<int>(input.network.nodes.size());
  std::vector<char> taken(variables, 0);
  std::vector<int> vars;
  const long number = shared.regions.fetch_add(1);
  const int far = number % 2 == 1 ? fullest_row_member(input, self.used, self.rng) : -1;
  const int size = self.size;
  grow(input.network, index, static_cast<int>(self.rng() % variables), far >= 0 ? size / 2 : size, self.rng, taken,
       vars);
  if (far >= 0) grow(input.network, index, far, size - size / 2, self.rng, taken, vars);
  const NetworkInput region = region_of(input, index, self.used, self.plan, vars);
  Assignment hint(vars.size());
  for (std::size_t k = 0; k < vars.size(); ++k) hint[k] = self.plan[vars[k]];
  NetworkSearchOptions search;
  search.deadline = options.deadline;
  search.max_work = options.work_per_region;
  const NetworkSearch found = search_network(region, self.cost, hint, search);
  if (!found.plan.empty()) {
    for (std::size_t k = 0; k < vars.size(); ++k) self.plan[vars[k]] = found.plan[k];
    self.cost = found.incumbent;
    self.used = usage_of(input, self.plan);
  }
  std::lock_guard<std::mutex> lock(shared.mutex);
  ++run.regions;
  if (!found.plan.empty() && self.cost < shared.cost) {
    shared.plan = self.plan;
    shared.cost = self.cost;
    run.plans.emplace_back(self.plan, self.cost);
  }
  if (found.outcome == "closed") {
    ++run.closed;
    self.size = std::min({variables, options.max_size, size + size / 4 + 1});
  } else if (found.outcome == "work limit") {
    self.size = std::max(kMinSize, size - size / 5);
  }
}

}  // namespace

NetworkInput region_input(const NetworkInput& input, const Assignment& plan, const std::vector<int>& vars) {
  return region_of(input, index_of(input), usage_of(input, plan), plan, vars);
}

NetworkRegionRun search_network_regions(const NetworkInput& input, int64_t incumbent, Assignment plan,
                                        const NetworkRegionOptions& options) {
  NetworkRegionRun run;
  const int variables = static_cast<int>(input.network.nodes.size());
  if (variables == 0 || plan.empty() || !input.multipliers.q.empty()) return run;
  const NetworkIndex index = index_of(input);
  Shared shared{plan, incumbent};
  const int threads = std::max(1, options.threads);
  std::vector<int> sizes(threads);
  const auto worker = [&](int w) {
    Worker self{plan, incumbent, usage_of(input, plan), std::mt19937_64(options.seed + kWorkerStream * w),
                std::min(options.first_size, variables)};
    while (!shared.done(options)) {
      if (threads > 1) adopt_shared(input, shared, self);
      search_one_region(input, index, options, shared, self, run);
    }
    sizes[w] = self.size;
  };
  if (threads == 1) {
    worker(0);
  } else {
    std::vector<std::thread> pool;
    for (int w = 0; w < threads; ++w) pool.emplace_back(worker, w);
    for (std::thread& t : pool) t.join();
  }
  run.size = sizes.front();
  return run;
}

}  // namespace shardsynth::synth
