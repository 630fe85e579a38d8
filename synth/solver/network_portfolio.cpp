#include "synth/solver/network_portfolio.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <thread>

#include "synth/solver/network_cutoffs.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

// One member's search and the plans it reported.
struct MemberRun {
  NetworkSearch found;                                // its outcome and counts
  std::vector<std::pair<Assignment, int64_t>> plans;  // its plans, each cheaper than the last
};

// The race's shared state: per member, the work with which it closed (-1
// while it has not).
class Race {
 public:
  explicit Race(std::size_t members) : closed_at_(new std::atomic<long>[members]), members_(members) {
    for (std::size_t i = 0; i < members; ++i) closed_at_[i].store(-1);
  }

  // Whether member `i`, at `work` values, can no longer win: another member
  // closed with less work, or with as much and a lower index.
  bool beaten(std::size_t i, long work) const {
    for (std::size_t j = 0; j < members_; ++j) {
      const long closed = closed_at_[j].load();
      if (j == i || closed < 0) continue;
      if (work > closed || (work == closed && j < i)) return true;
    }
    return false;
  }

  void closed(std::size_t i, long work) { closed_at_[i].store(work); }

 private:
  std::unique_ptr<std::atomic<long>[]> closed_at_;  // per member: its closing work, -1 while open
  std::size_t members_;                             // how many members race
};

MemberRun run_member(const NetworkInput& input, int64_t incumbent, const Assignment& hint, NetworkSearchOptions options,
                     bool climb, std::size_t index, Race& race) {
  MemberRun run;
  options.stop_at_work = [&race, index](long work) { return race.beaten(index, work); };
  const auto search = climb ? search_network_by_cutoffs : search_network;
  run.found = search(input, incumbent, hint, options,
                     [&run](const Assignment& plan, int64_t cost) { run.plans.emplace_back(plan, cost); });
  if (run.found.outcome == "closed") race.closed(index, run.found.work);
  return run;
}

// The closed member with the least work (ties: the lower index), or -1.
int winner_of(const std::vector<MemberRun>& runs) {
  int winner = -1;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].found.outcome != "closed") continue;
    if (winner < 0 || runs[i].found.work < runs[winner].found.work) winner = static_cast<int>(i);
  }
  return winner;
}

// No member closed: every plan of every member, by falling cost (ties: the
// lower member first), each kept only when cheaper than the one before.
PortfolioRun merged(std::vector<MemberRun>& runs) {
  PortfolioRun out;
  out.found = runs.front().found;
  out.found.nodes = out.found.work = 0;
  std::vector<std::pair<Assignment, int64_t>> all;
  for (MemberRun& run : runs) {
    out.found.nodes += run.found.nodes;
    out.found.work += run.found.work;
    out.found.root_bound = std::max(out.found.root_bound, run.found.root_bound);
    out.found.priced_rows = std::max(out.found.priced_rows, run.found.priced_rows);
    if (run.found.outcome == "time limit") out.found.outcome = run.found.outcome;
    if (run.found.incumbent < out.found.incumbent) {
      out.found.incumbent = run.found.incumbent;
      out.found.plan = run.found.plan;
    }
    for (auto& plan : run.plans) all.push_back(std::move(plan));
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (auto& plan : all) {
    if (out.plans.empty() || plan.second < out.plans.back().second) out.plans.push_back(std::move(plan));
  }
  return out;
}

}  // namespace

PortfolioRun search_portfolio(const std::vector<const NetworkInput*>& inputs, int64_t incumbent, const Assignment& hint,
                              const NetworkSearchOptions& options, bool climb, int threads) {
  const auto start = Clock::now();
  std::vector<MemberRun> runs(inputs.size());
  Race race(inputs.size());
  if (threads >= 2 && inputs.size() >= 2) {
    std::vector<std::exception_ptr> errors(inputs.size());
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      pool.emplace_back([&, i] {
        try {
          runs[i] = run_member(*inputs[i], incumbent, hint, options, climb, i, race);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    }
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  } else {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      NetworkSearchOptions share = options;
      if (options.deadline) share.deadline = Clock::now() + (*options.deadline - Clock::now()) / (inputs.size() - i);
      runs[i] = run_member(*inputs[i], incumbent, hint, share, climb, i, race);
    }
  }
  const int winner = winner_of(runs);
  PortfolioRun out;
  if (winner >= 0) {
    out.found = std::move(runs[winner].found);
    out.plans = std::move(runs[winner].plans);
    out.winner = winner;
  } else {
    out = merged(runs);
  }
  out.found.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return out;
}

}  // namespace shardsynth::synth
