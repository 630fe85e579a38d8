// `shard-run`: execute a synthesized schedule on CPU ranks, one MPI process
// per device, and optionally check it against the unsharded model.
//
//   mpirun -np 8 shard-run --schedule plan.json --check gpt2 --layers 2
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "costs/collective.hpp"
#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "ir/model_cli.hpp"
#include "ir/op_table.hpp"
#include "ir/schedule.hpp"
#include "runtime/executor.hpp"
#include "runtime/backend.hpp"
#include "runtime/reference.hpp"

namespace {

using namespace shardsynth;

// Relative tolerance of --check: fp32 sums in a different order.
constexpr double kTolerance = 1e-5;

struct Flags {
  std::string schedule_path;   // --schedule
  std::string backend = "cpu"; // --backend
  uint64_t seed = 0;           // --seed
  bool check = false;          // --check
  ir::ModelFlags model;        // model subcommand flags
};

int run(const Flags& flags, const std::string& model_name, int rank) {
  // Everything up to the communicator is checked by every rank alike, so a
  // bad input makes every rank exit 2 with the same message and nothing hangs.
  const ir::Graph graph = ir::build_model(flags.model, model_name);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(ir::read_file(flags.schedule_path));
  } catch (const nlohmann::json::parse_error& e) {
    throw ir::InputError(flags.schedule_path + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
  const ir::Schedule schedule = ir::schedule_from_json(json);
  std::string shape_text;
  for (int64_t e : schedule.mesh) shape_text += (shape_text.empty() ? "" : "x") + std::to_string(e);
  const ir::Mesh mesh = ir::parse_mesh(shape_text);
  runtime::validate_schedule(graph, mesh, schedule);

  runtime::Backend backend = runtime::make_backend(flags.backend, mesh.shape);
  runtime::RunResult result;
  try {
    result = runtime::run_sharded(graph, mesh, schedule, *backend.comm, flags.seed, *backend.kernels);
  } catch (const std::exception& e) {
    backend.comm->abort(e.what());
  }
  int status = 0;
  if (rank == 0) {
    std::printf("shard-run: %s on mesh %s (%lld ranks), backend %s\n", model_name.c_str(), shape_text.c_str(),
                static_cast<long long>(mesh.num_devices()), flags.backend.c_str());
    std::printf("%-16s %20s %20s\n", "collective", "bytes sent (rank 0)", "cost model");
    int64_t sent_total = 0, predicted_total = 0;
    for (auto kind : {costs::CollectiveKind::all_gather, costs::CollectiveKind::reduce_scatter,
                      costs::CollectiveKind::all_reduce, costs::CollectiveKind::all_to_all}) {
      const int64_t sent = result.sent.count(kind) ? result.sent.at(kind) : 0;
      const int64_t predicted = result.predicted.count(kind) ? result.predicted.at(kind) : 0;
      sent_total += sent;
      predicted_total += predicted;
      std::printf("%-16s %20lld %20lld%s\n", costs::collective_name(kind).c_str(), static_cast<long long>(sent),
                  static_cast<long long>(predicted), sent == predicted ? "" : "  MISMATCH");
      if (sent != predicted) status = 1;
    }
    std::printf("%-16s %20lld %20lld\n", "total", static_cast<long long>(sent_total), static_cast<long long>(predicted_total));
    if (flags.check) {
      const auto reference = runtime::run_reference(graph, flags.seed);
      const runtime::Tensor* expected = nullptr;
      for (const auto& [name, value] : reference) {
        if (graph.node(*graph.find(name)).kind == ir::kOutput) expected = &value;
      }
      if (expected == nullptr || expected->shape != result.output.shape) {
        std::printf("check: the output shape differs from the unsharded model's: FAILED\n");
        status = 1;
      } else {
        double max_abs = 0, scale = 0;
        for (std::size_t i = 0; i < expected->data.size(); ++i) {
          max_abs = std::max(max_abs, static_cast<double>(std::fabs(expected->data[i] - result.output.data[i])));
          scale = std::max(scale, static_cast<double>(std::fabs(expected->data[i])));
        }
        const double rel = scale > 0 ? max_abs / scale : max_abs;
        const bool ok = rel <= kTolerance;
        std::printf("check: max abs error %.3g, max rel error %.3g (tolerance %.0e): %s\n", max_abs, rel, kTolerance,
                    ok ? "OK" : "FAILED");
        if (!ok) status = 1;
      }
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{"shard-run: execute a shardsynth schedule, one MPI rank per device", "shard-run"};
  Flags flags;
  app.add_option("--schedule", flags.schedule_path, "the schedule JSON written by `synth --schedule`")->required();
  app.add_option("--backend", flags.backend, "cpu (MPI ranks) or cuda (one GPU per rank, NCCL)")->capture_default_str();
  app.add_option("--seed", flags.seed, "seed of the deterministic parameters and inputs")->capture_default_str();
  app.add_flag("--check", flags.check, "also run the unsharded model on rank 0 and compare the outputs");
  ir::add_model_subcommands(app, flags.model);
  app.require_subcommand(1);
  app.fallthrough();
  int code = 0;
  try {
    app.parse(argc, argv);
    code = run(flags, app.get_subcommands().front()->get_name(), rank);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      if (rank == 0) app.exit(e);
    } else {
      if (rank == 0) std::fprintf(stderr, "shard-run: error: %s\n", e.what());
      code = 2;
    }
  } catch (const ir::InputError& e) {
    if (rank == 0) std::fprintf(stderr, "shard-run: error: %s\n", e.what());
    code = 2;
  }
  MPI_Finalize();
  return code;
}
