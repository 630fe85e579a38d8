// The scheduling-DSL example: a user shards one weight by hand, shardsynth
// completes the schedule optimally around that decision, the plan is written
// back through the DSL, re-scored from the DSL's schedule (preload), and
// executed on CPU ranks over MPI against the unsharded model.
//
//   mpirun -np 8 dsl_example
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

#include "costs/cost_model.hpp"
#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "runtime/executor.hpp"
#include "runtime/mpi_communicator.hpp"
#include "runtime/reference.hpp"
#include "slapo_schedule.hpp"
#include "synth/synthesizer.hpp"

namespace ir = shardsynth::ir;
namespace synth = shardsynth::synth;
namespace runtime = shardsynth::runtime;

namespace {

// Relative tolerance against the unsharded model: fp32 sums in another order.
constexpr double kTolerance = 1e-4;

int run(int rank, int ranks) {
  const ir::Graph graph = ir::build_mlp({8, 64, 256, 1024, ir::DType::float32});
  const ir::Mesh mesh = ir::parse_mesh(std::to_string(ranks));
  const auto model = shardsynth::costs::make_cost_model("alpha-beta");

  // The user's own decision, as in Slapo: fc1's weight column-parallel.
  dsl::Schedule sch(graph, mesh);
  sch["fc1"].shard("weight", 0);

  // shardsynth finds the cheapest plan that keeps it, and proves it optimal.
  synth::SynthOptions options;
  options.pins = sch.pins();
  const synth::SynthResult result = synth::synthesize(graph, mesh, *model, options);
  sch.fill_from(result.schedule);
  const ir::Schedule plan = sch.to_ir(result.schedule);

  // Preload: the DSL's schedule scores exactly what the search found.
  const auto rescored = synth::evaluate_schedule(graph, mesh, *model, options, plan);

  runtime::MpiCommunicator comm(mesh.shape);
  const runtime::RunResult run = runtime::run_sharded(graph, mesh, plan, comm, /*seed=*/7);
  if (rank != 0) return 0;

  for (bool by_user : {true, false}) {
    if (by_user) {
      std::printf("# written by the user\n");
    } else {
      std::printf("# completed by shardsynth: cost %lld %s, %s\n", static_cast<long long>(result.search.best_cost),
                  model->unit().c_str(), result.search.proven_optimal ? "proven optimal" : "not proven optimal");
    }
    for (std::size_t i = 0; i < sch.directives().size(); ++i) {
      if (sch.written_by_user()[i] == by_user) std::printf("%s\n", ir::to_text(sch.directives()[i]).c_str());
    }
  }
  const bool same_cost = rescored.search.best_cost == result.search.best_cost;
  std::printf("preload: the DSL schedule scores %lld: %s\n", static_cast<long long>(rescored.search.best_cost),
              same_cost ? "OK" : "MISMATCH");

  const auto reference = runtime::run_reference(graph, 7);
  const runtime::Tensor& expected = reference.at("output");
  double max_abs = 0, scale = 0;
  for (std::size_t i = 0; i < expected.data.size(); ++i) {
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(expected.data[i] - run.output.data[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(expected.data[i])));
  }
  const bool close = expected.shape == run.output.shape && max_abs <= kTolerance * scale;
  std::printf("run on %d ranks: max abs error %.3g against the unsharded model: %s\n", ranks, max_abs,
              close ? "OK" : "FAILED");
  return same_cost && close && result.search.proven_optimal ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 0;
  try {
    status = run(rank, ranks);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dsl_example: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
