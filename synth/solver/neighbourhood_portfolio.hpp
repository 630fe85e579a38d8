#pragma once
// Chooses, each round, which neighbourhoods (neighbourhood.hpp) run, by
// each one's record. Those that must run every round (max_backoff 0) run
// first, in registration order. The others run in the order of their record
// of improvement per unit of work (improvements + 1 over work + 1, ties by
// registration order), and each backs off while it finds nothing: after k
// fruitless applications in a row it skips the next 2^k - 1 rounds, up to
// its max_backoff; one improvement resets that. Work is counted in the
// neighbourhoods' deterministic units, never in seconds, so the choice and
// hence the search's results depend only on the seed and thread count.
#include <memory>
#include <vector>

#include "synth/solver/neighbourhood.hpp"

namespace shardsynth::synth {

// One neighbourhood's record.
struct NeighbourhoodRecord {
  long applications = 0;   // times it ran (skipped ones not counted)
  long improvements = 0;   // times it offered the search's new best
  long work = 0;           // deterministic work spent over all applications
  int backoff = 0;         // rounds to skip after its next fruitless application, before doubling (0, 1, 3, 7, ...)
  int wait = 0;            // rounds left to skip
};

class NeighbourhoodPortfolio {
 public:
  explicit NeighbourhoodPortfolio(std::vector<std::unique_ptr<Neighbourhood>> all);

  // Runs this round's choice on `context`; stops early at a proof, which it returns.
  NeighbourhoodOutcome round(NeighbourhoodContext& context);

  const std::vector<NeighbourhoodRecord>& records() const { return records_; }  // per neighbourhood, registration order
  int size() const { return static_cast<int>(all_.size()); }                      // neighbourhoods registered

 private:
  std::vector<int> order() const;
  void record(int k, const NeighbourhoodOutcome& outcome);

  std::vector<std::unique_ptr<Neighbourhood>> all_;  // in registration order
  std::vector<NeighbourhoodRecord> records_;         // per neighbourhood
};

}  // namespace shardsynth::synth
