#pragma once
// The moves of the Lagrangian search (lagrangian_search.hpp) behind one
// interface. After each round's priced proposal, the search hands every
// neighbourhood the same context: the proposal, the incumbent, the visiting
// order and the random stream. A neighbourhood tries to turn them into a
// cheaper feasible plan, offers what it finds, and says how much
// deterministic work it spent, so that the portfolio (neighbourhood_portfolio.hpp)
// can choose among them by their record without looking at the clock.
//
// To add one: a class in its own file, and one line in make_neighbourhoods
// (neighbourhoods.cpp).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "synth/solver/folding.hpp"
#include "synth/solver/local_search.hpp"

namespace shardsynth::synth {

// What a neighbourhood works on in one round. References into the search.
struct NeighbourhoodContext {
  const FoldedProblem& folded;                             // the problem, folded; moves act on its kernel
  LocalSearch& proposal;                                   // this round's priced proposal (may break the limit); restored after each move
  LocalSearch& incumbent;                                  // the best feasible kernel assignment so far (valid when have_incumbent)
  const bool& have_incumbent;                             // whether `incumbent` holds a feasible plan (may turn true during the round)
  const std::vector<std::vector<double>>& penalty;         // per kernel node and strategy: the usage priced by the multipliers
  std::vector<int>& order;                                 // a visiting order of the kernel nodes (moves may shuffle it)
  std::mt19937_64& rng;                                    // the search's random stream (a move without a stream of its own, from the search's seed, draws from it)
  std::optional<std::chrono::steady_clock::time_point> deadline;  // no check may run past it
  std::function<bool(const Assignment&, bool by_region)> offer;    // offers a feasible kernel assignment; true when it is the search's new best
};

// What one application did.
struct NeighbourhoodOutcome {
  bool improved = false;       // it offered a plan that became the search's best
  long work = 0;               // deterministic work spent (node visits, or region nodes times checks): the time unit of the portfolio's record
  bool proven = false;         // Z3 proved the incumbent optimal on the whole kernel
  int64_t proven_cost = 0;     // when proven: the incumbent's kernel cost
  bool skipped = false;        // it had nothing to work on (e.g. no incumbent yet): its record stays as it is
};

class Neighbourhood {
 public:
  virtual ~Neighbourhood() = default;
  // A short name for traces and tests ("repair-polish", "z3-region").
  virtual std::string_view name() const = 0;
  // The longest run of rounds the portfolio may skip it after fruitless
  // tries (0 = runs every round: a move the search relies on).
  virtual int max_backoff() const = 0;
  // One application on this round's context.
  virtual NeighbourhoodOutcome apply(NeighbourhoodContext& context) = 0;
};

// Options a neighbourhood may be built with.
struct NeighbourhoodOptions {
  int region_attempts = 4;  // Z3 region searches per application (0 = the region neighbourhood is left out)
  int bnb_attempts = 4;     // branch-and-bound region searches per application (0 = that neighbourhood is left out)
  uint64_t seed = 0;        // the search's seed, from which a neighbourhood with a random stream of its own derives it
};

// Every registered neighbourhood, in registration order (neighbourhoods.cpp).
std::vector<std::unique_ptr<Neighbourhood>> make_neighbourhoods(const NeighbourhoodOptions& options);

}  // namespace shardsynth::synth
