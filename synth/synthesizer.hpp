#pragma once
// The library entry point: everything `synth` does, callable from C++.
//
//   auto graph = ir::build_mlp({});
//   auto mesh = ir::parse_mesh("8");
//   auto model = costs::make_cost_model("slapo");
//   auto result = synth::synthesize(graph, mesh, *model, {}, on_iteration);
//   std::cout << ir::directives_text(result.schedule);
#include <functional>

#include "costs/cost_model.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"
#include "synth/lowering.hpp"
#include "synth/pins.hpp"
#include "synth/solver/solver_types.hpp"
#include "synth/solver/solver_error.hpp"

namespace shardsynth::synth {

struct SynthResult {
  Lowered lowered;        // the problem that was solved, with its labels
  CegisResult search;     // the loop's trace and best assignment
  ir::Schedule schedule;  // the best assignment as directives
};

struct SynthOptions {
  LowerOptions lower;  // mode and memory budget
  CegisOptions cegis;  // loop limits
  std::vector<Pin> pins;  // user pins (fix or forbid a tensor's spec); conflicting pins throw PinConflictError
  bool family_starts = true;  // under a memory budget without a plan family, start from the families' plans where the anytime search runs (family_starts.hpp)
};

// Called after every solver call with the lowered problem for printing.
using SynthCallback = std::function<void(const Lowered& lowered, const Iteration& iteration)>;

// Solves a plain problem (e.g. one read with load_iopddl): run_cegis, which
// throws SolverError (synth/solver/solver_error.hpp) when Z3 itself fails.
CegisResult solve_problem(const Problem& problem, const CegisOptions& options, const IterationCallback& on_iteration = nullptr);

// Thrown when a limit (--time-limit, --max-iterations) stops the search
// before it found any plan.
class NoPlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

SynthResult synthesize(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                       const SynthOptions& options = {}, const SynthCallback& on_iteration = nullptr);

// A seeded random legal plan instead of a search (synth/random_plan.hpp;
// `synth --plan random --seed N`), under the options' mode, memory budget,
// pins and plan family: the result's search holds one sat iteration with the
// plan's assignment and cost, not marked proven. The same seed gives the same
// schedule. Throws ir::InputError when no legal plan is drawn.
SynthResult random_plan(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                        const SynthOptions& options, uint64_t seed);
// The same on a problem already lowered (and pinned) by `model`, for sweeps
// that draw many plans from one lowering.
SynthResult random_plan(const Lowered& lowered, const costs::CostModel& model, uint64_t seed);

// Scores a given schedule without searching (MASE's preload): the result's
// search holds one sat iteration with the schedule's assignment and cost,
// and is not marked proven. Throws ir::InputError when the schedule does
// not fit the graph, or is forbidden (e.g. over the memory budget).
SynthResult evaluate_schedule(const ir::Graph& graph, const ir::Mesh& mesh, const costs::CostModel& model,
                              const SynthOptions& options, const ir::Schedule& schedule);

}  // namespace shardsynth::synth
