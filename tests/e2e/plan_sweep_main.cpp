// `plan_sweep` (tests only): runs seeded random legal plans
// (synth::random_plan, the plans of `synth --plan random --seed N`) on MPI
// ranks and holds each to what `shard-run --check` holds a plan to
// (runtime/run_check.hpp): rank 0's bytes per collective kind equal the cost
// model's, and the output matches the unsharded model. Each schedule must
// also read back as its plan (synth::assignment_from_schedule, what
// `synth evaluate` scores).
//
//   mpirun --allow-run-as-root --oversubscribe -np 8 plan_sweep --models gpt2 --plans 3
//
// One launch runs every case (model x mesh x mode): each case's ranks are
// the first D of the launch (D = the mesh's devices; -np must be at least the
// largest), so mpirun starts once. Rank 0 lowers each case once, draws the
// plans with seeds --first-seed, --first-seed + 1, ..., broadcasts each
// schedule and runs its part like every other rank of the case. A failing
// plan prints its seed, model flags and mesh as one command line that
// reproduces it with the real binaries, then is shrunk (synth::shrink_plan)
// and the tensors it still shards are printed. Exit 1 when a plan failed; a
// rank that throws aborts the launch after printing the reproduction.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/mesh.hpp"
#include "ir/model_cli.hpp"
#include "ir/schedule.hpp"
#include "runtime/executor.hpp"
#include "runtime/mpi_communicator.hpp"
#include "runtime/reference.hpp"
#include "runtime/run_check.hpp"
#include "synth/random_plan.hpp"
#include "synth/schedule_builder.hpp"
#include "synth/synthesizer.hpp"

namespace {

using namespace shardsynth;

// The models swept, by name: the flags `synth` and `shard-run` take after the command.
const std::map<std::string, std::string>& sweep_models() {
  static const std::map<std::string, std::string> models{
      {"mlp", "mlp --batch 8 --seq 16 --hidden 32 --ffn 64"},
      // Every size divides 8 devices.
      {"gpt2", "gpt2 --layers 2 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256"},
      // Sizes that divide 2 devices only (batch, vocab), 4 (seq) or none (heads 3):
      // the dims that do not divide stay whole in every legal plan.
      {"gpt2-uneven", "gpt2 --layers 2 --embd 48 --heads 3 --seq 12 --batch 6 --vocab 250"},
      // 16-bit graphs (issue 30): priced and sent at 2 bytes an element, rounded per op.
      {"gpt2-bf16", "--dtype bf16 gpt2 --layers 2 --embd 64 --heads 4 --seq 16 --batch 8 --vocab 256"},
      {"mlp-fp16", "--dtype fp16 mlp --batch 8 --seq 16 --hidden 32 --ffn 64"},
  };
  return models;
}

struct Flags {
  int plans = 3;                                          // --plans: random plans per case
  int64_t first_seed = 1;                                 // --first-seed: the first case's seeds start here
  std::string models = "mlp,gpt2,gpt2-uneven,gpt2-bf16,mlp-fp16";  // --models
  std::string meshes = "2,4,8,2x4";                       // --meshes
  std::string modes = "inference,training";               // --modes
  std::string cost_models = "alpha-beta";                 // --cost-models (slapo: 1-D meshes only)
  bool shrink = true;                                     // --no-shrink clears it
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The model a command line's flags build in `mode`, as `synth` and `shard-run`
// build it (a training graph ends in its loss head).
ir::Graph build_from_flags(const std::string& flags, const std::string& mode) {
  CLI::App app;
  ir::ModelFlags model;
  ir::add_model_subcommands(app, model);
  std::vector<std::string> args = split(flags, ' ');
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  app.parse(args);
  model.training = costs::parse_mode(mode) == costs::Mode::training;
  return ir::build_model(model, ir::chosen_model(app, model));
}

struct Case {
  std::string model;       // the model's flags
  std::string mesh;        // "2x4"
  std::string mode;        // "inference" or "training"
  std::string cost_model;  // "alpha-beta" or "slapo"
};

// One command line that reproduces a plan with the real binaries.
std::string reproduction(const Case& c, int64_t devices, int64_t seed) {
  return "synth " + c.model + " --mesh " + c.mesh + " --mode " + c.mode +
         (c.cost_model == "alpha-beta" ? "" : " --cost-model " + c.cost_model) + " --plan random --seed " + std::to_string(seed) +
         " --quiet --schedule p.json && mpirun --allow-run-as-root --oversubscribe -np " + std::to_string(devices) +
         " shard-run --schedule p.json --check " + c.model;
}

// Broadcasts a string from rank 0 of `comm`.
std::string broadcast(std::string text, MPI_Comm comm) {
  long long length = static_cast<long long>(text.size());
  MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm);
  text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm);
  return text;
}

// Runs one schedule on every rank of `comm`; on rank 0 returns what fails
// ("" when the plan matches). A rank that throws aborts the launch, naming
// `repro`.
std::string execute(const ir::Graph& graph, const ir::Mesh& mesh, const ir::Schedule& schedule,
                    const runtime::Tensor* reference, const std::string& repro, MPI_Comm comm) {
  runtime::RunResult result;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  try {
    runtime::MpiCommunicator communicator(mesh.shape, comm);
    result = runtime::run_sharded(graph, mesh, schedule, communicator, 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan_sweep: rank %d: %s\n  reproduce: %s\n", rank, e.what(), repro.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank != 0) return "";
  std::string failure;
  for (const runtime::ByteCount& row : runtime::byte_counts(result)) {
    if (row.sent == row.predicted) continue;
    failure += (failure.empty() ? "" : "; ") + costs::collective_name(row.kind) + " sent " + std::to_string(row.sent) +
               " bytes, priced " + std::to_string(row.predicted);
  }
  const double tolerance = runtime::check_tolerance(graph);
  const runtime::OutputComparison c = runtime::compare_output(*reference, result.output, tolerance);
  if (!c.ok) {
    char text[128];
    std::snprintf(text, sizeof text, "output max rel error %.3g over %.0e%s", c.max_rel, tolerance,
                  c.same_shape ? "" : " (shapes differ)");
    failure += (failure.empty() ? "" : "; ") + std::string(text);
  }
  return failure;
}

// Why a case has no plan to sweep ("" when it has): a model that the cost
// model cannot shard at all on that mesh, as synth refuses it. Under the
// PR's volume model every op with a reduction factor must shard one, so
// gpt2-uneven's loss head (seq 12 x vocab 250) has none on 8 devices.
// Every rank decides alike, before any case runs.
std::string no_legal_plan(const Case& c) {
  const auto model = costs::make_cost_model(c.cost_model);
  synth::LowerOptions options;
  options.mode = costs::parse_mode(c.mode);
  try {
    synth::lower(build_from_flags(c.model, c.mode), ir::parse_mesh(c.mesh), *model, options);
  } catch (const ir::InputError& e) {
    const std::string what = e.what();
    if (what.find("has no legal sharding") != std::string::npos) return what;
    throw;
  }
  return "";
}

// Rank 0 of a case: draws, runs, reports and shrinks. Returns {plans, failures}.
std::pair<int, int> drive(const Case& c, const Flags& flags, MPI_Comm comm) {
  const ir::Graph graph = build_from_flags(c.model, c.mode);
  const ir::Mesh mesh = ir::parse_mesh(c.mesh);
  const auto model = costs::make_cost_model(c.cost_model);
  synth::LowerOptions options;
  options.mode = costs::parse_mode(c.mode);
  synth::Lowered lowered = synth::lower(graph, mesh, *model, options);
  lowered.problem.name = "graph";
  runtime::Tensor reference;
  for (const auto& [name, value] : runtime::run_reference_outputs(graph, 0)) reference = value;

  std::string repro;
  // What fails for one plan: its run on the ranks, and reading its schedule
  // back as the same plan (what `synth evaluate` scores).
  auto check = [&](const synth::Assignment& assignment, const ir::Schedule& schedule) {
    broadcast(repro + "\n" + ir::to_json(schedule).dump(), comm);
    std::string failure = execute(graph, mesh, schedule, &reference, repro, comm);
    try {
      if (synth::assignment_from_schedule(lowered, schedule) != assignment) {
        failure += (failure.empty() ? "" : "; ") + std::string("the schedule reads back as another plan");
      }
    } catch (const ir::InputError& e) {
      failure += (failure.empty() ? "" : "; ") + std::string("the schedule does not read back: ") + e.what();
    }
    return failure;
  };
  int failures = 0;
  for (int i = 0; i < flags.plans; ++i) {
    const int64_t seed = flags.first_seed + i;
    repro = reproduction(c, mesh.num_devices(), seed);
    const synth::SynthResult plan = synth::random_plan(lowered, *model, static_cast<uint64_t>(seed));
    const std::string failure = check(plan.search.best, plan.schedule);
    if (failure.empty()) continue;
    ++failures;
    std::printf("FAILED seed %lld (%s on mesh %s, %s): %s\n  reproduce: %s\n", static_cast<long long>(seed),
                c.model.c_str(), c.mesh.c_str(), c.mode.c_str(), failure.c_str(), repro.c_str());
    std::fflush(stdout);
    if (!flags.shrink) continue;
    const synth::Assignment shrunk = synth::shrink_plan(lowered, plan.search.best, [&](const synth::Assignment& a) {
      return !check(a, synth::build_schedule(lowered, a, model->name(), synth::evaluate(lowered.problem, a), false)).empty();
    });
    const auto sharded = synth::sharded_nodes(lowered, shrunk);
    std::printf("  shrunk: it still fails with %zu node(s) sharded:\n", sharded.size());
    for (const auto& line : sharded) std::printf("    %s\n", line.c_str());
    std::fflush(stdout);
  }
  broadcast("", comm);  // the case is over
  return {flags.plans, failures};
}

// Every other rank of a case: runs what rank 0 broadcasts until it sends "".
void serve(const Case& c, MPI_Comm comm) {
  const ir::Graph graph = build_from_flags(c.model, c.mode);
  const ir::Mesh mesh = ir::parse_mesh(c.mesh);
  for (std::string message = broadcast("", comm); !message.empty(); message = broadcast("", comm)) {
    const auto newline = message.find('\n');
    const std::string repro = message.substr(0, newline);
    const ir::Schedule schedule = ir::schedule_from_json(nlohmann::json::parse(message.substr(newline + 1)));
    execute(graph, mesh, schedule, nullptr, repro, comm);
  }
}

int sweep(const Flags& flags) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<Case> cases;
  for (const auto& name : split(flags.models, ',')) {
    const auto it = sweep_models().find(name);
    if (it == sweep_models().end()) throw ir::InputError("--models: unknown model '" + name + "' (known: mlp, gpt2, gpt2-uneven, gpt2-bf16, mlp-fp16)");
    for (const auto& mesh : split(flags.meshes, ',')) {
      if (ir::parse_mesh(mesh).num_devices() > size) {
        throw ir::InputError("--meshes " + mesh + " needs more ranks than the " + std::to_string(size) + " started");
      }
      for (const auto& mode : split(flags.modes, ',')) {
        costs::parse_mode(mode);
        for (const auto& cost_model : split(flags.cost_models, ',')) {
          costs::make_cost_model(cost_model);
          // The PR's volume model describes 1-D meshes only.
          if (cost_model == "slapo" && ir::parse_mesh(mesh).rank() > 1) continue;
          const Case c{it->second, mesh, mode, cost_model};
          if (const std::string why = no_legal_plan(c); !why.empty()) {
            if (rank == 0) std::printf("%s on mesh %s, %s, %s: skipped: %s\n", c.model.c_str(), mesh.c_str(), mode.c_str(), cost_model.c_str(), why.c_str());
            continue;
          }
          cases.push_back(c);
        }
      }
    }
  }
  int plans = 0, failures = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const Case& c : cases) {
    const int devices = static_cast<int>(ir::parse_mesh(c.mesh).num_devices());
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank < devices ? 0 : MPI_UNDEFINED, rank, &comm);
    if (comm == MPI_COMM_NULL) continue;
    if (rank == 0) {
      std::pair<int, int> counts;
      try {
        counts = drive(c, flags, comm);
      } catch (const std::exception& e) {  // lowering or drawing: the other ranks wait in a broadcast
        std::fprintf(stderr, "plan_sweep: %s on mesh %s, %s: %s\n", c.model.c_str(), c.mesh.c_str(), c.mode.c_str(), e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      const auto [ran, failed] = counts;
      plans += ran;
      failures += failed;
      std::printf("%s on mesh %s, %s, %s: %d plans, %d failed\n", c.model.c_str(), c.mesh.c_str(), c.mode.c_str(),
                  c.cost_model.c_str(), ran, failed);
      std::fflush(stdout);
    } else {
      serve(c, comm);
    }
    MPI_Comm_free(&comm);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rank == 0) {
    std::printf("plan_sweep: %d random plans in %zu cases: %d matched, %d failed (%.1f s)\n", plans, cases.size(),
                plans - failures, failures, seconds);
  }
  int status = failures > 0;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{"plan_sweep: run seeded random plans under shard-run's --check, every rank of a case in one launch", "plan_sweep"};
  Flags flags;
  app.add_option("--plans", flags.plans, "random plans per case (model x mesh x mode)")->capture_default_str();
  app.add_option("--first-seed", flags.first_seed, "seed of each case's first plan; the next ones count up")->capture_default_str();
  app.add_option("--models", flags.models, "comma list of mlp, gpt2 (sizes divide 8), gpt2-uneven")->capture_default_str();
  app.add_option("--meshes", flags.meshes, "comma list of meshes")->capture_default_str();
  app.add_option("--modes", flags.modes, "comma list of inference, training")->capture_default_str();
  app.add_option("--cost-models", flags.cost_models, "comma list of alpha-beta, slapo (slapo: 1-D meshes only)")
      ->capture_default_str();
  bool no_shrink = false;
  app.add_flag("--no-shrink", no_shrink, "report failing plans without shrinking them");
  int code = 0;
  try {
    app.parse(argc, argv);
    flags.shrink = !no_shrink;
    code = sweep(flags);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) app.exit(e);
    code = e.get_exit_code() == 0 ? 0 : 2;
  } catch (const ir::InputError& e) {
    if (rank == 0) std::fprintf(stderr, "plan_sweep: error: %s\n", e.what());
    code = 2;
  }
  MPI_Finalize();
  return code;
}
