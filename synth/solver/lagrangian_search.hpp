#pragma once
// The anytime primal side for problems whose usage limit binds: Lagrangian
// multipliers on the usage slots price memory per strategy, tree-structured
// moves and a descent on the priced costs propose an assignment, a repair
// makes it keep the limit, and a descent on the true costs with the limit
// kept polishes it. Subgradient steps raise the multipliers where the
// proposal broke the limit and lower them where it left room. The
// multipliers also give a lower bound: TRW-S on the priced costs, minus the
// limit's price.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "synth/solver/folding.hpp"

namespace shardsynth::synth {

struct LagrangianOptions {
  uint64_t seed = 1;                                               // random visiting orders and forests
  std::optional<std::chrono::steady_clock::time_point> deadline;  // no round starts after this time
  int bound_every = 32;                                            // a Lagrangian lower bound every this many rounds (0 = never)
  int region_attempts = 4;                                         // Z3 region searches per round on the incumbent (0 = none)
  int bnb_attempts = 4;                                            // branch-and-bound region searches per round on the incumbent (0 = none)
};

// One improving feasible kernel assignment.
struct KernelPlan {
  Assignment kernel;  // one kernel strategy per kernel node
  int64_t cost = 0;   // its kernel cost (the folded constant not included)
  long round = 0;     // the round that found it
  bool by_region = false;  // found by Z3 on a region (region_cegis.hpp), not by the priced descent and repair
};

class LagrangianSearch {
 public:
  // Keeps a reference to `folded`, which must outlive this object.
  LagrangianSearch(const FoldedProblem& folded, const LagrangianOptions& options);
  ~LagrangianSearch();
  LagrangianSearch(const LagrangianSearch&) = delete;
  LagrangianSearch& operator=(const LagrangianSearch&) = delete;

  // Runs up to `rounds` multiplier rounds (fewer at the deadline, or when the
  // multipliers have nothing left to price). Returns the feasible plans that
  // improved on the cost to beat, in order.
  std::vector<KernelPlan> run(long rounds);
  // Lowers the cost that a plan must beat to be returned (another search's best).
  void beat(int64_t cost);
  // Repairs a kernel assignment proposed elsewhere (the memory dual's
  // decoded one) into one that keeps the limit, polishes it and offers it
  // as a plan; its own current assignment stays as it was.
  void propose(const Assignment& kernel);
  // Takes a feasible kernel plan found elsewhere (another search's best) as
  // the incumbent that the neighbourhoods improve, when it is cheaper than
  // this search's own best (it is then the cost to beat, too); the
  // proposal, multipliers and random stream stay as they were. Returns
  // whether it took it.
  bool adopt(const Assignment& kernel);

  long rounds() const;               // rounds run so far
  bool finished() const;             // nothing left to do (no limit to price, or an empty kernel)
  int64_t lower_bound() const;       // no kernel assignment within the limit costs less
  long last_improvement() const;     // the round of the last improving plan (0 = none)
  bool proven() const;               // Z3 proved its best plan optimal (a region held the whole kernel)
  int64_t own_best() const;          // the kernel cost of its incumbent (kForbidden = none yet)
  Assignment incumbent() const;      // its best feasible kernel plan (empty = none yet)

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shardsynth::synth
