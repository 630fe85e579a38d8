#include "synth/solver/anytime.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "synth/solver/epoch_workers.hpp"
#include "synth/solver/folding.hpp"
#include "synth/solver/interrupt.hpp"
#include "synth/solver/lagrangian_search.hpp"
#include "synth/solver/memory_dual.hpp"
#include "synth/solver/path_relink.hpp"

namespace shardsynth::synth {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point begin) { return std::chrono::duration<double, std::milli>(Clock::now() - begin).count(); }

bool out_of_time(const AnytimeOptions& options) {
  return (options.deadline && Clock::now() >= *options.deadline) || interrupt_requested();
}

// A folding that leaves nothing to search decides alone: an infeasible
// node, or a kernel without nodes (one assignment is left). Returns whether
// `result` is final.
bool settled_by_folding(const Problem& problem, const FoldedProblem& folded, const AnytimeOptions& options,
                        int64_t start_cost, Clock::time_point begin, const AnytimeCallback& on_step,
                        AnytimeResult& result) {
  if (folded.infeasible) {
    result.infeasible = !out_of_time(options);
    result.stop_reason = result.infeasible ? "infeasible" : "time limit";
    return true;
  }
  if (!folded.kernel.nodes.empty()) return false;
  AnytimeStep step;
  step.assignment = unfold(folded, {});
  step.cost = evaluate(problem, step.assignment);
  if (step.cost >= kForbidden) {
    result.infeasible = true;
    result.stop_reason = "infeasible";
    return true;
  }
  step.found_ms = ms_since(begin);
  // The start, if given, is this one assignment: it is no step then.
  if (on_step && start_cost > step.cost) on_step(step);
  result.best = step.assignment;
  result.best_cost = result.lower_bound = step.cost;
  result.proven_optimal = true;
  result.stop_reason = "unsat";
  return true;
}

// One search with the given seed.
std::unique_ptr<LagrangianSearch> make_search(const FoldedProblem& folded, const AnytimeOptions& options, uint64_t seed) {
  LagrangianOptions o;
  o.seed = seed;
  o.deadline = options.deadline;
  o.region_attempts = options.region_attempts;
  return std::make_unique<LagrangianSearch>(folded, o);
}

std::vector<std::unique_ptr<LagrangianSearch>> make_searches(const FoldedProblem& folded, const AnytimeOptions& options) {
  std::vector<std::unique_ptr<LagrangianSearch>> searches;
  const int count = options.searches > 0 ? options.searches : std::max(1, options.threads);
  for (int k = 0; k < count; ++k) searches.push_back(make_search(folded, options, options.seed + static_cast<uint64_t>(k)));
  return searches;
}

std::unique_ptr<MemoryDual> make_dual(const FoldedProblem& folded, const AnytimeOptions& options) {
  if (options.dual_steps <= 0 || !folded.usage_limit) return nullptr;
  const int kernel_nodes = static_cast<int>(folded.kernel.nodes.size());
  if (options.dual_max_kernel_nodes > 0 && kernel_nodes > options.dual_max_kernel_nodes) return nullptr;
  MemoryDualOptions o;
  o.deadline = options.deadline;
  return std::make_unique<MemoryDual>(folded, o);
}

// One epoch: every search runs its rounds, and the dual its steps; threads
// only when there are several.
// With more searches than threads, thread t runs searches t, t + threads,
// ... one after the other.
void run_epoch(std::vector<std::unique_ptr<LagrangianSearch>>& searches, int threads, long rounds, MemoryDual* dual,
               int dual_steps, std::vector<std::vector<KernelPlan>>& found) {
  const int count = static_cast<int>(searches.size());
  const int workers = std::clamp(threads, 1, count);
  if (workers == 1 && !dual) {
    for (int k = 0; k < count; ++k) found[k] = searches[k]->run(rounds);
    return;
  }
  std::vector<std::thread> pool;
  static const std::atomic<bool> never{false};
  if (dual) pool.emplace_back([&] { dual->run(never, dual_steps); });
  for (int w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      for (int k = w; k < count; k += workers) found[k] = searches[k]->run(rounds);
    });
  }
  for (auto& t : pool) t.join();
}

// After `keep_after` epochs, keeps only the `keep` searches with the
// cheapest own best (the first of equals by index), so that many short
// paths are tried first and the most promising run on. Returns the rounds
// that the searches left behind had run.
long keep_leaders(int keep, std::vector<std::unique_ptr<LagrangianSearch>>& searches,
                  std::vector<std::vector<KernelPlan>>& found, std::vector<long>& born) {
  if (keep <= 0 || static_cast<int>(searches.size()) <= keep) return 0;
  std::vector<std::size_t> order(searches.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return searches[a]->own_best() < searches[b]->own_best(); });
  long rounds = 0;
  std::vector<std::unique_ptr<LagrangianSearch>> kept;
  std::vector<long> kept_born;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (static_cast<int>(i) < keep) {
      kept.push_back(std::move(searches[order[i]]));
      kept_born.push_back(born[order[i]]);
    } else {
      rounds += searches[order[i]]->rounds();
    }
  }
  searches = std::move(kept);
  born = std::move(kept_born);
  found.resize(keep);
  return rounds;
}

// Hands the dual's assignments to the searches to repair, polish and offer
// (reported after the next epoch): its last decoded one to the first
// search, its newest plan that keeps the limit (a probe or a relinked mix)
// to the last.
void offer_dual_plans(MemoryDual& dual, std::vector<std::unique_ptr<LagrangianSearch>>& searches) {
  if (!dual.decoded().empty()) searches.front()->propose(dual.decoded());
  const Assignment plan = dual.take_feasible();
  if (!plan.empty()) searches.back()->propose(plan);
}

// The cheapest of the epoch's plans (the first of equals, by search); at
// least one was found.
const Assignment& cheapest(const std::vector<std::vector<KernelPlan>>& found) {
  const KernelPlan* best = nullptr;
  for (const auto& plans : found) {
    for (const auto& plan : plans) {
      if (!best || plan.cost < best->cost) best = &plan;
    }
  }
  return best->kernel;
}

// The best kernel plan found by the searches so far, which lagging searches
// adopt or relink with, and how many epochs in a row each search's own best
// has been dearer (restart_after counts them too).
struct Elite {
  Assignment kernel;             // the cheapest kernel plan found so far (empty = none)
  int64_t cost = kForbidden;     // its kernel cost
  std::vector<long> behind;      // per search: epochs in a row its own best was dearer than `cost`
  std::vector<std::deque<int64_t>> history;  // per search: its own best after each of the last restart_after + 1 epochs, oldest first
  long epochs = 0;               // epochs shared so far
};

// Counts the epochs in a row that search k's own best (`own_best`) has
// been dearer than the elite, and keeps the last restart_after + 1 of it.
void note_own_best(std::size_t k, int64_t own_best, long restart_after, Elite& elite) {
  elite.behind[k] = own_best > elite.cost ? elite.behind[k] + 1 : 0;
  auto& history = elite.history[k];
  history.push_back(own_best);
  if (static_cast<long>(history.size()) > std::max<long>(restart_after, 1) + 1) history.pop_front();
}

// Keeps the epoch's cheapest plan when it beats the elite.
void take_cheapest(const std::vector<std::vector<KernelPlan>>& found, std::size_t searches, Elite& elite) {
  for (const auto& plans : found) {
    for (const auto& plan : plans) {
      if (plan.cost < elite.cost) {
        elite.cost = plan.cost;
        elite.kernel = plan.kernel;
      }
    }
  }
  elite.behind.resize(searches, 0);
  elite.history.resize(searches);
  ++elite.epochs;
}

// Whether search k is a laggard to start afresh (AnytimeOptions::restart_after).
bool to_restart(const AnytimeOptions& options, const Elite& elite, std::size_t k) {
  return elite.behind[k] >= options.restart_after && falls_too_slowly(elite.history[k], elite.cost);
}

// The bookkeeping of search k started afresh after `run` epoch rounds:
// its epoch round of birth, its lag and its history.
void note_fresh(std::size_t k, long run, Elite& elite, std::vector<long>& born, AnytimeResult& result) {
  born[k] = run;
  elite.behind[k] = 0;
  elite.history[k].clear();
  ++result.restarts;
}

// Replaces each search that has lagged the best plan for `restart_after`
// epochs in a row, and whose own best fell by less than its distance to it
// over those epochs (falls_too_slowly), by a fresh one with the next
// unused seed: on the contest's M a search's basin is settled in its first
// rounds, so a stuck laggard is worth more as a new start. A laggard that
// falls faster than that goes on (on S plans keep falling). `born` (per search: the
// epoch round it started at) and `retired` (rounds of searches left
// behind) keep the rounds counted.
void restart_laggards(const FoldedProblem& folded, const AnytimeOptions& options, long run,
                      std::vector<std::unique_ptr<LagrangianSearch>>& searches, Elite& elite, uint64_t& next_seed,
                      std::vector<long>& born, long& retired, AnytimeResult& result) {
  bool restarted = false;
  for (std::size_t k = 0; k < searches.size(); ++k) {
    if (!to_restart(options, elite, k)) continue;
    retired += searches[k]->rounds();
    searches[k].reset();
    searches[k] = make_search(folded, options, next_seed++);
    note_fresh(k, run, elite, born, result);
    restarted = true;
  }
#if defined(__GLIBC__)
  // The old searches' memory sits free in the arenas of the epochs'
  // threads; hand it back to the system. (S's peak with restarts was one
  // Z3 region's encoding, not this: kMaxEncodedTerms in region_cegis.hpp.)
  if (restarted) malloc_trim(0);
#endif
}

// Keeps the epoch's cheapest plan when it beats the elite, then hands the
// elite to each search that has lagged behind it for `adopt_after` epochs.
void share_elite(const FoldedProblem& folded, const std::vector<std::vector<KernelPlan>>& found, long adopt_after,
                 long relink_every, long restart_after, std::vector<std::unique_ptr<LagrangianSearch>>& searches,
                 Elite& elite) {
  take_cheapest(found, searches.size(), elite);
  for (std::size_t k = 0; k < searches.size(); ++k) {
    if (searches[k]->own_best() > elite.cost && relink_every > 0 && elite.epochs % relink_every == 0) {
      const Assignment mixed = relink(folded, searches[k]->incumbent(), elite.kernel);
      if (!mixed.empty()) searches[k]->propose(mixed);
    }
    note_own_best(k, searches[k]->own_best(), restart_after, elite);
    if (adopt_after <= 0 || elite.behind[k] < adopt_after) continue;
    searches[k]->adopt(elite.kernel);
    elite.behind[k] = 0;
  }
}

// Reports the epoch's plans that beat the best, in a fixed order (by round,
// then by search), each unfolded and scored on the original problem.
// Returns whether any did.
bool report_found(const Problem& problem, const FoldedProblem& folded, const std::vector<std::vector<KernelPlan>>& found,
                  const std::vector<long>& born, Clock::time_point begin, const AnytimeCallback& on_step,
                  AnytimeResult& result) {
  struct Found {
    long round;               // the round that found it (of the epochs: the search's own plus the rounds before it started)
    int search;               // the search that found it
    const KernelPlan* plan;   // the plan
  };
  std::vector<Found> all;
  for (int k = 0; k < static_cast<int>(found.size()); ++k) {
    for (const auto& plan : found[k]) all.push_back({born[k] + plan.round, k, &plan});
  }
  std::sort(all.begin(), all.end(),
            [](const Found& a, const Found& b) { return a.round != b.round ? a.round < b.round : a.search < b.search; });
  bool improved = false;
  for (const auto& f : all) {
    const int64_t kernel_total = cost_add(f.plan->cost, folded.constant);
    if (kernel_total >= result.best_cost) continue;
    AnytimeStep step;
    step.assignment = unfold(folded, f.plan->kernel);
    step.cost = evaluate(problem, step.assignment);
    if (step.cost != kernel_total) {
      throw std::logic_error("anytime search: the evaluator scores a plan " + std::to_string(step.cost) +
                             " but its folded cost is " + std::to_string(kernel_total));
    }
    step.found_ms = ms_since(begin);
    step.search = f.search;
    step.round = f.round;  // rounds of the epochs, counted from the first
    step.by_region = f.plan->by_region;
    result.best = step.assignment;
    result.best_cost = step.cost;
    improved = true;
    if (on_step) on_step(step);
  }
  return improved;
}

// Gathers the searches' rounds (those of `retired` searches added), bounds
// and proofs after an epoch, from their records of it (`dual_bound`: the
// memory dual's, 0 = none). Returns whether they are over: proven, or all
// finished.
bool gather(const std::vector<EpochRecord>& records, int64_t dual_bound, long retired, const FoldedProblem& folded,
            AnytimeResult& result) {
  result.rounds = retired;
  int64_t bound = dual_bound;
  bool all_finished = true;
  for (const EpochRecord& r : records) {
    result.proven_optimal = result.proven_optimal || r.proven;
    result.rounds += r.rounds;
    bound = std::max(bound, r.lower_bound);
    all_finished = all_finished && r.finished;
  }
  result.lower_bound = std::max(result.lower_bound, cost_add(bound, folded.constant));
  if (result.best_cost < kForbidden) result.lower_bound = std::min(result.lower_bound, result.best_cost);
  if (result.proven_optimal && result.best_cost < kForbidden) {
    result.lower_bound = result.best_cost;
    result.stop_reason = "unsat";
    return true;
  }
  if (all_finished) result.stop_reason = "finished";
  return all_finished;
}

// The rounds of the epoch that starts after `run` rounds (the last one cut
// at max_rounds).
long epoch_length(const AnytimeOptions& options, long run) {
  return options.max_rounds > 0 ? std::min(options.epoch_rounds, options.max_rounds - run) : options.epoch_rounds;
}

// Counts the rounds without improvement (`stalled`) after an epoch of
// `epoch` rounds and returns whether the search stops early: stalled (the
// stall rule) or good enough.
bool stops_early(const AnytimeOptions& options, bool improved, long epoch, long improved_at, long& stalled,
                 AnytimeResult& result) {
  stalled = improved ? 0 : stalled + epoch;
  const bool may_stall = options.stall_below <= 0 || result.best_cost <= options.stall_below;
  if (options.stall_rounds > 0 && may_stall &&
      stalled >= std::max<double>(options.stall_rounds, options.stall_ratio * improved_at)) {
    result.stop_reason = "stalled";
    return true;
  }
  if (options.good_enough > 0 && result.best_cost <= options.good_enough) {
    result.stop_reason = "good enough";
    return true;
  }
  return false;
}

// Whether the searches may run ahead of the exchange (epoch_workers.hpp):
// nothing passes into a search between epochs but its replacement (and the
// cost to beat, which only filters what it reports). So: one search per
// thread, at least two, and no memory dual, adopting, relinking or keeping
// of leaders.
bool may_run_ahead(const AnytimeOptions& options, std::size_t searches, const MemoryDual* dual) {
  return options.lead_epochs > 0 && options.threads >= 2 && static_cast<int>(searches) == options.threads && !dual &&
         options.adopt_after <= 0 && options.relink_every <= 0 && options.keep_after <= 0;
}

// The bookkeeping of the epochs, kept across the switch from lock-step
// epochs to searches that run ahead (anytime_search).
struct EpochState {
  long run = 0;                  // rounds run by each search
  long stalled = 0;              // rounds (of each search) since the last improvement
  long improved_at = 0;          // `run` at the last improvement
  long retired = 0;              // rounds run by searches left behind (keep_after, restart_after)
  std::vector<long> born;        // per search: the epoch round it started at
  uint64_t next_seed = 0;        // the seed of the next fresh search (restart_after)
  Elite elite;                   // the plan that lagging searches adopt (adopt_after), and the laggards' records
};

// The epochs of searches that run ahead (may_run_ahead), taken in order
// and treated as the lock-step loop in anytime_search treats its epochs:
// the same plans, restarts, bounds and stops for a seed. At the deadline,
// the plans of the epochs run past the last one taken are reported too.
void run_ahead(const Problem& problem, const FoldedProblem& folded, const AnytimeOptions& options,
               std::vector<std::unique_ptr<LagrangianSearch>> searches, EpochState& state, Clock::time_point begin,
               const AnytimeCallback& on_step, AnytimeResult& result) {
  const std::size_t count = searches.size();
  const long rounds_left = options.max_rounds > 0 ? options.max_rounds - state.run : 0;  // per search (0 = no limit)
  EpochWorkers workers(std::move(searches), options.epoch_rounds, rounds_left, options.lead_epochs);
  std::vector<std::vector<KernelPlan>> found(count);
  auto& [run, stalled, improved_at, retired, born, next_seed, elite] = state;
  while (!out_of_time(options)) {
    if (options.max_rounds > 0 && run >= options.max_rounds) {
      result.stop_reason = "rounds";
      return;
    }
    const long epoch = epoch_length(options, run);
    std::vector<EpochRecord> records = workers.take();
    run += epoch;
    for (std::size_t k = 0; k < count; ++k) found[k] = std::move(records[k].found);
    const bool improved = report_found(problem, folded, found, born, begin, on_step, result);
    if (options.restart_after > 0) {
      take_cheapest(found, count, elite);
      for (std::size_t k = 0; k < count; ++k) note_own_best(k, records[k].own_best, options.restart_after, elite);
      for (std::size_t k = 0; k < count; ++k) {
        if (!to_restart(options, elite, k)) continue;
        retired += records[k].rounds;
        records[k] = EpochRecord{};  // the fresh search has run nothing yet
        workers.replace(static_cast<int>(k), make_search(folded, options, next_seed++));
        note_fresh(k, run, elite, born, result);
      }
    }
    if (improved) improved_at = run;
    const int64_t bound_before = result.lower_bound;
    const bool over = gather(records, 0, retired, folded, result);
    if (options.on_bound && result.lower_bound > bound_before) options.on_bound(result.lower_bound);
    if (over || stops_early(options, improved, epoch, improved_at, stalled, result)) return;
  }
  // The deadline: what the searches found in the epochs past the last one
  // taken counts too, in the same order.
  std::vector<std::deque<EpochRecord>> left = workers.stop();
  for (std::size_t k = 0; k < count; ++k) {
    found[k].clear();
    for (auto& r : left[k]) {
      found[k].insert(found[k].end(), std::make_move_iterator(r.found.begin()), std::make_move_iterator(r.found.end()));
    }
  }
  report_found(problem, folded, found, born, begin, on_step, result);
  result.stop_reason = "time limit";
}

}  // namespace

AnytimeResult anytime_search(const Problem& problem, const AnytimeOptions& options, const AnytimeCallback& on_step) {
  const auto begin = Clock::now();
  AnytimeResult result;
  const FoldedProblem folded = fold_problem(problem, options.deadline);
  result.fold_ms = ms_since(begin);
  result.kernel_nodes = static_cast<int>(folded.kernel.nodes.size());
  result.kernel_edges = static_cast<int>(folded.kernel.edges.size());
  // The plan to beat, if one is given and keeps the limit.
  const int64_t start_cost = options.start.empty() ? kForbidden : evaluate(problem, options.start);
  if (settled_by_folding(problem, folded, options, start_cost, begin, on_step, result)) {
    if (options.on_bound && result.lower_bound > 0) options.on_bound(result.lower_bound);
    return result;
  }
  auto searches = make_searches(folded, options);
  const auto dual = make_dual(folded, options);
  if (start_cost < kForbidden) {
    // The searches do not start from it: they explore as they would
    // without it, and report only plans cheaper than it.
    result.best = options.start;
    result.best_cost = start_cost;
    for (auto& s : searches) s->beat(start_cost - folded.constant);
  }
  EpochState state;
  state.born.assign(searches.size(), 0);
  state.next_seed = options.seed + searches.size();
  if (may_run_ahead(options, searches.size(), dual.get())) {
    run_ahead(problem, folded, options, std::move(searches), state, begin, on_step, result);
    return result;
  }
  std::vector<std::vector<KernelPlan>> found(searches.size());
  auto& [run, stalled, improved_at, retired, born, next_seed, elite] = state;
  bool dual_on = !options.dual_after_stall;  // whether the dual runs in the next epoch
  long dual_idle = 0;                        // epochs in a row that the dual ran without a cheaper plan
  bool dual_left = false;                    // the dual left for good (dual_patience)
  while (!out_of_time(options)) {
    if (options.max_rounds > 0 && run >= options.max_rounds) {
      result.stop_reason = "rounds";
      return result;
    }
    // Once the dual has left for good, nothing passes into the searches
    // that run ahead would not pass either: the same plans, sooner, as
    // each search no longer waits at every epoch for the slower one.
    if (dual_left && may_run_ahead(options, searches.size(), nullptr)) {
      run_ahead(problem, folded, options, std::move(searches), state, begin, on_step, result);
      return result;
    }
    const bool dual_ran = dual && dual_on;
    const long epoch = epoch_length(options, run);
    run_epoch(searches, options.threads, epoch, dual_ran ? dual.get() : nullptr, options.dual_steps, found);
    run += epoch;
    const bool improved = report_found(problem, folded, found, born, begin, on_step, result);
    if ((options.adopt_after > 0 || options.relink_every > 0 || options.restart_after > 0) && searches.size() > 1) {
      share_elite(folded, found, options.adopt_after, options.relink_every, options.restart_after, searches, elite);
      if (options.restart_after > 0) {
        restart_laggards(folded, options, run, searches, elite, next_seed, born, retired, result);
      }
    }
    if (improved) improved_at = run;
    dual_on = dual_on || !improved;
    dual_idle = improved ? 0 : dual_idle + (dual_on ? 1 : 0);
    if (options.dual_patience > 0 && dual_idle >= options.dual_patience) dual_left = true;
    if (dual_left) dual_on = false;
    for (auto& s : searches) {
      if (result.best_cost < kForbidden) s->beat(result.best_cost - folded.constant);
    }
    if (dual && improved) dual->add_plan(cheapest(found));
    if (dual_ran) offer_dual_plans(*dual, searches);
    const int64_t bound_before = result.lower_bound;
    std::vector<EpochRecord> states;
    for (const auto& s : searches) states.push_back(record_of(*s));
    const bool over = gather(states, dual ? dual->lower_bound() : 0, retired, folded, result);
    if (options.on_bound && result.lower_bound > bound_before) options.on_bound(result.lower_bound);
    if (over) return result;
    if (options.keep_after > 0 && run >= options.keep_after) {
      retired += keep_leaders(options.threads, searches, found, born);
    }
    if (stops_early(options, improved, epoch, improved_at, stalled, result)) return result;
  }
  result.stop_reason = "time limit";
  return result;
}

// On the contest's M, Z3's regions go on shaving a stuck basin by a few
// parts in a million (49,969.4e6 to 49,969.3e6 over ten epochs), so the
// rule before this one ("its own best has not fallen at all") never
// restarted them.
bool falls_too_slowly(const std::deque<int64_t>& history, int64_t best) {
  const int64_t now = history.back();
  return now > best && history.front() - now < now - best;
}

}  // namespace shardsynth::synth
