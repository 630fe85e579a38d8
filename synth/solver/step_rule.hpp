#pragma once
// How the Lagrangian search moves its multipliers (one per usage slot)
// after a round: the interface, so that another rule is a new class, and
// Polyak's rule, the one in use.
#include <cstdint>
#include <vector>

namespace shardsynth::synth {

// The round's subgradient of the Lagrangian dual at the multipliers.
struct Subgradient {
  std::vector<double> g;  // per slot: usage minus limit, projected onto the multipliers' bounds (0 where lambda = 0 and g < 0)
  double norm = 0;        // sum of g squared
  double dual = 0;        // the dual value of the proposal: priced cost plus lambda times (usage minus limit)
};

// What a step may aim at.
struct StepTargets {
  int64_t lower_bound = 0;  // the search's proven lower bound (kernel costs)
  int64_t best = 0;         // the search's best feasible kernel cost (kForbidden when none)
};

class StepRule {
 public:
  virtual ~StepRule() = default;
  // Moves `lambda` (kept >= 0) given the round's subgradient; returns
  // whether it moved (then the penalties are priced again).
  virtual bool update(const Subgradient& sub, const StepTargets& targets, std::vector<double>& lambda) = 0;
};

// Polyak's step towards the best feasible cost (5% above the dual value
// before there is one), times a factor that halves every 8 rounds and
// starts again at 1 below 1e-3: a cyclic schedule of step sizes. (Until
// this rule became a class, the code meant to halve only when the dual
// value had not risen for 8 rounds, but its test compared against minus
// infinity plus a NaN and never passed, so the schedule was cyclic; that is
// the rule measured in BENCHMARKS.md, kept as it is.) The proposal is a
// local optimum only, so its dual value may overstate the true one; the
// proven bound caps it.
class PolyakStep final : public StepRule {
 public:
  bool update(const Subgradient& sub, const StepTargets& targets, std::vector<double>& lambda) override;

 private:
  double theta_ = 1.0;  // step factor
  int rounds_ = 0;      // rounds since the factor last halved
};

// Polyak's step with the factor halved only when the dual value has not
// risen above its best for `patience` rounds in a row (the rule PolyakStep
// once meant to be), starting again at 1 below 1e-3. Same target as
// PolyakStep.
class StallingPolyakStep final : public StepRule {
 public:
  explicit StallingPolyakStep(int patience = 8) : patience_(patience) {}
  bool update(const Subgradient& sub, const StepTargets& targets, std::vector<double>& lambda) override;

 private:
  int patience_;                   // rounds without a better dual value before the factor halves
  double theta_ = 1.0;             // step factor
  int stalled_ = 0;                // rounds since the dual value last rose above best_dual_
  double best_dual_ = -1e300;      // the best dual value seen (kernel cost units)
};

}  // namespace shardsynth::synth
