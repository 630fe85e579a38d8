// `shard-run`: execute a synthesized schedule on CPU ranks, one MPI process
// per device, and optionally check it against the unsharded model.
//
//   mpirun -np 8 shard-run --schedule plan.json --check gpt2 --layers 2
//   mpirun -np 8 shard-run --schedule staged.json --micro-batches 4 --check gpt2 --layers 4
//
// --schedule takes an intra-op schedule ("shardsynth.schedule/1") or a
// pipeline-staged one ("shardsynth.staged_schedule/1", run by
// runtime/shard_run_staged.hpp); the JSON "format" field decides.
// A schedule from `synth --memory-report` lists the tensors each device holds
// by plan: an intra-op run (inference, or --train) holds and frees them as
// planned and prints every rank's measured peak under the prediction, which
// --check confirms (runtime/memory_check.hpp); staged runs are not measured.
// --params and --input load parameters and graph inputs from safetensors
// files (a Hugging Face GPT-2 checkpoint loads as is); --output writes the
// gathered graph output. gpt2 and llama are built as training graphs, ending
// in their loss head, for a training schedule (or --train without one):
// ir::build_model's `training`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "costs/collective.hpp"
#include "ir/error.hpp"
#include "ir/json_field.hpp"
#include "ir/file_io.hpp"
#include "ir/cli_numbers.hpp"
#include "ir/model_cli.hpp"
#include "costs/precision_cli.hpp"
#include "ir/op_table.hpp"
#include "ir/schedule.hpp"
#include "ir/staged_schedule.hpp"
#include "ir/version.hpp"
#include "runtime/executor.hpp"
#include "runtime/half.hpp"
#include "runtime/memory_check.hpp"
#include "runtime/backend.hpp"
#include "runtime/reference.hpp"
#include "runtime/run_check.hpp"
#include "runtime/safetensors.hpp"
#include "runtime/cli/shard_run_plan.hpp"
#include "runtime/shard_run_staged.hpp"
#include "runtime/shard_run_train.hpp"
#include "runtime/staged_training.hpp"

namespace {

using namespace shardsynth;

struct Flags {
  std::string schedule_path;   // --schedule
  std::string backend = "cpu"; // --backend
  uint64_t seed = 0;           // --seed
  bool check = false;          // --check
  std::string params_path;     // --params: parameters by full name (safetensors)
  std::string input_path;      // --input: graph inputs by placeholder name (safetensors)
  std::string output_path;     // --output: where rank 0 writes the graph output (safetensors)
  int micro_batches = 1;       // --micro-batches: micro-batches a staged schedule streams
  runtime::PlanFlags plan;     // --mesh, --stages, --stage-balance, --cost-model: plan stages in-process
  bool planning_options = false;  // whether --mesh, --stage-balance or --cost-model was given
  ir::ModelFlags model;        // model subcommand flags
  bool train = false;          // --train: run forward, backward and the optimizer step
  int steps = 1;               // --steps: optimizer steps of a training run
  double lr = 1e-3;            // --lr: learning rate of a training run
  std::string optimizer = "adam";  // --optimizer: sgd or adam
  bool training_options = false;   // whether --steps, --lr or --optimizer was given
  costs::PrecisionFlags precision;  // --reduce-dtype, --master-dtype, --loss-scale (training)
};

// The precision policy of a training run, as the runtime can run it: the
// costs' checks (costs::check_policy), and master weights in float32.
costs::PrecisionPolicy training_policy(const Flags& flags, const ir::Graph& graph) {
  const costs::PrecisionPolicy policy = costs::make_policy(flags.precision);
  costs::check_policy(policy, graph, true);
  if (runtime::has_half(graph) && policy.master != ir::DType::float32) {
    throw ir::InputError("--master-dtype " + flags.precision.master_dtype +
                         ": the runtime keeps the master weights of 16-bit parameters in float32");
  }
  return policy;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// Every parameter of `graph` from the safetensors file at `path`, keyed by
// full name (node name + "." + param name, or the tied-to name). Keys may
// carry Hugging Face's "transformer." prefix; a tied parameter missing under
// its tied-to name is taken from its own name. Throws InputError naming the
// file and parameter when one is missing or has the wrong shape.
std::map<std::string, runtime::Tensor> load_params(const ir::Graph& graph, const std::string& path) {
  std::map<std::string, runtime::Tensor> file;
  const std::string prefix = "transformer.";
  for (auto& [name, tensor] : runtime::read_safetensors(path)) {
    const std::string key = name.starts_with(prefix) ? name.substr(prefix.size()) : name;
    if (!file.emplace(key, std::move(tensor)).second) {
      throw ir::InputError(path + ": parameter '" + key + "' appears both with and without the \"transformer.\" prefix");
    }
  }
  std::map<std::string, runtime::Tensor> params;
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    for (const ir::Param& p : node.params) {
      const std::string own = node.name + "." + p.name;
      const std::string full = p.tied_to.empty() ? own : p.tied_to;
      if (params.count(full)) continue;
      auto it = file.find(full);
      if (it == file.end() && full != own) it = file.find(own);
      if (it == file.end()) {
        throw ir::InputError(path + ": missing parameter '" + full + "' (shape " + shape_string(p.type.shape) + ")");
      }
      if (it->second.shape != p.type.shape) {
        throw ir::InputError(path + ": parameter '" + it->first + "' has shape " + shape_string(it->second.shape) +
                             " but the model needs " + shape_string(p.type.shape));
      }
      params.emplace(full, it->second);
    }
  }
  return params;
}

// The graph inputs in the safetensors file at `path`, by placeholder name;
// placeholders it lacks keep their seeded values. Throws InputError naming
// the file and tensor for a name that is no graph input, a wrong shape, or an
// id outside an embedding table.
std::map<std::string, runtime::Tensor> load_inputs(const ir::Graph& graph, const std::string& path) {
  std::map<std::string, runtime::Tensor> inputs = runtime::read_safetensors(path);
  for (const auto& [name, tensor] : inputs) {
    const auto v = graph.find(name);
    if (!v || graph.node(*v).kind != ir::kPlaceholder) {
      std::string names;
      for (ir::Vertex u : graph.topological_order()) {
        if (graph.node(u).kind == ir::kPlaceholder) names += (names.empty() ? "" : ", ") + graph.node(u).name;
      }
      throw ir::InputError(path + ": '" + name + "' is not an input of the model (inputs: " + names + ")");
    }
    const ir::Node& node = graph.node(*v);
    if (tensor.shape != node.type.shape) {
      throw ir::InputError(path + ": input '" + name + "' has shape " + shape_string(tensor.shape) +
                           " but the model needs " + shape_string(node.type.shape));
    }
    const int64_t limit = runtime::input_vocab_limit(graph, *v);
    if (limit == (int64_t{1} << 24)) continue;  // feeds no embedding table: any value will do
    for (float x : tensor.data) {
      if (!(x >= 0 && x < static_cast<float>(limit) && x == std::floor(x))) {
        throw ir::InputError(path + ": input '" + name + "' holds " + std::to_string(x) +
                             ", not an id in [0, " + std::to_string(limit) + ")");
      }
    }
  }
  return inputs;
}

nlohmann::json read_schedule_json(const std::string& path) {
  try {
    return nlohmann::json::parse(ir::read_file(path));
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers no double holds
    throw ir::InputError(path + ": not valid JSON (" + ir::json_parse_failure(e) + ")");
  }
}

// The mode of a schedule's JSON (a staged one's: its first stage's), or ""
// when it names none.
std::string schedule_mode(const nlohmann::json& json) {
  const nlohmann::json* schedule = &json;
  if (json.is_object() && json.contains("stages") && json["stages"].is_array() && !json["stages"].empty() &&
      json["stages"][0].is_object() && json["stages"][0].contains("schedule")) {
    schedule = &json["stages"][0]["schedule"];
  }
  if (!schedule->is_object() || !schedule->contains("mode") || !(*schedule)["mode"].is_string()) return "";
  return (*schedule)["mode"].get<std::string>();
}

// A training graph, which ends in the model's loss head, where the
// schedule is a training plan (it plans that head), else for --train. A
// schedule that cannot be read says nothing here; run() reports it, and
// --train with an inference plan is refused there.
bool builds_training_graph(const Flags& flags) {
  std::string mode;
  if (!flags.schedule_path.empty()) {
    try {
      mode = schedule_mode(read_schedule_json(flags.schedule_path));
    } catch (const ir::InputError&) {
    }
  }
  return mode.empty() ? flags.train : mode == "training";
}

bool is_staged(const nlohmann::json& json) {
  return json.is_object() && json.contains("format") && json["format"] == ir::kStagedScheduleFormat;
}

// A pipeline-staged schedule, read or planned: the staged runtime does the rest.
int run_staged(const Flags& flags, const std::string& model_name, const ir::Graph& graph, const ir::StagedSchedule& staged) {
  if (runtime::has_half(graph)) {
    throw ir::InputError("a staged schedule runs float32 graphs only (stages hand activations over as float32); "
                         "use --dtype fp32 or an intra-op schedule");
  }
  if (flags.train) {
    if (!flags.input_path.empty() || !flags.output_path.empty()) {
      throw ir::InputError(std::string(flags.input_path.empty() ? "--output" : "--input") +
                           " is not supported with a staged schedule (inputs are seeded per micro-batch)");
    }
    runtime::StagedTrainCommand command{model_name, flags.backend, flags.micro_batches, flags.check, {}};
    command.setup.seed = flags.seed;
    command.setup.options = {flags.steps, flags.lr, runtime::parse_optimizer(flags.optimizer)};
    if (!flags.params_path.empty()) command.setup.params = load_params(graph, flags.params_path);
    return runtime::run_staged_train_command(graph, staged, command);
  }
  if (!flags.input_path.empty() || !flags.output_path.empty()) {
    throw ir::InputError(std::string(flags.input_path.empty() ? "--output" : "--input") +
                         " is not supported with a staged schedule (inputs are seeded per micro-batch)");
  }
  runtime::StagedCommand command{model_name, flags.backend, {flags.seed, flags.micro_batches}, flags.check, {}};
  if (!flags.params_path.empty()) command.params = load_params(graph, flags.params_path);
  return runtime::run_staged_command(graph, staged, command);
}

int run(const Flags& flags, const std::string& model_name, int rank) {
  // Everything up to the communicator is checked by every rank alike, so a
  // bad input makes every rank exit 2 with the same message and nothing hangs.
  ir::ModelFlags model_flags = flags.model;
  model_flags.training = builds_training_graph(flags);
  const ir::Graph graph = ir::build_model(model_flags, model_name);
  if (flags.micro_batches < 1) {
    throw ir::InputError("--micro-batches " + std::to_string(flags.micro_batches) + ": must be at least 1");
  }
  if (flags.schedule_path.empty() == (flags.plan.stages == 0)) {
    throw ir::InputError("give either --schedule FILE or --stages S (with --mesh) to plan in-process");
  }
  if (flags.plan.stages == 0 && flags.planning_options) {
    throw ir::InputError("--mesh, --stage-balance and --cost-model need --stages: a schedule file carries its own plan");
  }
  if (flags.training_options && !flags.train) throw ir::InputError("--steps, --lr and --optimizer need --train");
  if (flags.train && flags.plan.stages != 0) throw ir::InputError("--train runs intra-op schedules; --stages plans a staged one");
  if (flags.plan.stages != 0) {
    if (flags.plan.stages < 1) throw ir::InputError("--stages " + std::to_string(flags.plan.stages) + ": must be at least 1");
    runtime::PlanFlags plan = flags.plan;
    plan.micro_batches = flags.micro_batches;
    int status = run_staged(flags, model_name, graph, runtime::plan_in_process(graph, plan, MPI_COMM_WORLD));
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
  }
  const nlohmann::json json = read_schedule_json(flags.schedule_path);
  if (is_staged(json)) {
    int status = run_staged(flags, model_name, graph, ir::staged_schedule_from_json(json));
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
  }
  if (flags.micro_batches != 1) {
    throw ir::InputError("--micro-batches " + std::to_string(flags.micro_batches) +
                         " needs a staged schedule; " + flags.schedule_path + " is an intra-op schedule");
  }
  const ir::Schedule schedule = ir::schedule_from_json(json, flags.schedule_path);
  runtime::TrainOptions train_options{flags.steps, flags.lr, runtime::parse_optimizer(flags.optimizer)};
  if (flags.train) runtime::validate_training(schedule, train_options);
  std::string shape_text;
  for (int64_t e : schedule.mesh) shape_text += (shape_text.empty() ? "" : "x") + std::to_string(e);
  const ir::Mesh mesh = ir::parse_mesh(shape_text);
  runtime::validate_schedule(graph, mesh, schedule, flags.schedule_path);
  if (!flags.output_path.empty()) ir::check_writable(flags.output_path);  // every rank: all stop alike
  const auto params = flags.params_path.empty() ? std::map<std::string, runtime::Tensor>{}
                                                : load_params(graph, flags.params_path);
  const auto inputs = flags.input_path.empty() ? std::map<std::string, runtime::Tensor>{}
                                               : load_inputs(graph, flags.input_path);

  const costs::PrecisionPolicy policy = flags.train ? training_policy(flags, graph) : costs::PrecisionPolicy{};
  runtime::Backend backend = runtime::make_backend(flags.backend, mesh.shape);
  if (flags.train) {
    const runtime::TrainCommand command{
        model_name, flags.backend, flags.check, flags.output_path,
        {flags.seed, backend.kernels, backend.backward, params, inputs, train_options, policy, {}}};
    int status = runtime::run_train_command(graph, mesh, schedule, *backend.comm, command);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
  }
  runtime::RunResult result;
  try {
    result = runtime::run_sharded(graph, mesh, schedule, *backend.comm, flags.seed, *backend.kernels, params, inputs);
  } catch (const std::exception& e) {
    backend.comm->abort(e.what());
  }
  // Every rank's measured memory, when the schedule lists its planned tensors.
  const auto measured = result.memory ? runtime::gather_measured(*result.memory) : std::vector<runtime::MemoryMeasured>{};
  int status = 0;
  if (rank == 0) {
    std::printf("shard-run: %s on mesh %s (%lld ranks), backend %s\n", model_name.c_str(), shape_text.c_str(),
                static_cast<long long>(mesh.num_devices()), flags.backend.c_str());
    if (!runtime::print_byte_table(result)) status = 1;
    if (schedule.memory && schedule.mode != "inference") {
      std::printf("memory: the schedule's figures are for a training step (shard-run --train measures them)\n");
    } else if (schedule.memory &&
               runtime::report_memory(*schedule.memory, measured, runtime::step_names(graph, false), flags.check, true)) {
      status = 1;
    }
    if (!flags.output_path.empty()) {
      std::string output_name = "output";
      for (ir::Vertex v : graph.topological_order()) {
        if (graph.node(v).kind == ir::kOutput) output_name = graph.node(v).name;
      }
      try {
        runtime::write_safetensors(flags.output_path, {{output_name, result.output}});
        std::printf("output: wrote '%s' %s to %s\n", output_name.c_str(), shape_string(result.output.shape).c_str(),
                    flags.output_path.c_str());
      } catch (const ir::InputError& e) {
        std::fprintf(stderr, "shard-run: error: %s\n", e.what());
        status = 2;
      }
    }
    if (flags.check) {
      const auto reference = runtime::run_reference(graph, flags.seed, inputs, params);
      const runtime::Tensor* expected = nullptr;
      for (const auto& [name, value] : reference) {
        if (graph.node(*graph.find(name)).kind == ir::kOutput) expected = &value;
      }
      const runtime::OutputComparison c =
          expected == nullptr ? runtime::OutputComparison{}
                              : runtime::compare_output(*expected, result.output, runtime::check_tolerance(graph));
      if (!c.same_shape) {
        std::printf("check: the output shape differs from the unsharded model's: FAILED\n");
      } else {
        std::printf("check: max abs error %.3g, max rel error %.3g (tolerance %.0e): %s\n", c.max_abs, c.max_rel,
                    runtime::check_tolerance(graph), c.ok ? "OK" : "FAILED");
      }
      if (!c.ok) status = 1;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  // `shard-run --version` alone answers without starting MPI (no mpirun needed).
  const std::string version = shardsynth::ir::version_line("shard-run");
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("%s\n", version.c_str());
    return 0;
  }
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{"shard-run: execute a shardsynth schedule, one MPI rank per device", "shard-run"};
  Flags flags;
  app.add_option("--schedule", flags.schedule_path,
                 "the schedule JSON written by `synth --schedule`, intra-op or pipeline-staged");
  app.add_option("--stages", flags.plan.stages,
                 "instead of --schedule: plan S pipeline stages in-process (synth::plan_stages) on --mesh");
  app.add_option("--mesh", flags.plan.mesh, "with --stages: the whole mesh, axis 0 = stages (4x2)");
  app.add_option("--stage-balance", flags.plan.balance, "with --stages: cost (exact DP) or params (fairscale's rule)")
      ->capture_default_str();
  app.add_option("--cost-model", flags.plan.cost_model, "with --stages: alpha-beta or slapo")->capture_default_str();
  app.add_option("--micro-batches", flags.micro_batches,
                 "micro-batches a staged schedule streams through its stages (the model flags size one)")
      ->capture_default_str();
  app.add_option("--backend", flags.backend, "cpu (MPI ranks) or cuda (one GPU per rank, NCCL)")->capture_default_str();
  app.add_option("--seed", flags.seed, "seed of the deterministic parameters and inputs")->capture_default_str();
  app.add_option("--params", flags.params_path,
                 "safetensors file of every parameter by full name (a Hugging Face GPT-2 checkpoint works as is)");
  app.add_option("--input", flags.input_path, "safetensors file of graph inputs by placeholder name (input_ids)");
  app.add_option("--output", flags.output_path, "safetensors file rank 0 writes the graph output to");
  app.add_flag("--check", flags.check,
               "also run the unsharded model on rank 0 and compare the outputs; with a schedule from synth "
               "--memory-report, also hold every rank's measured memory peak by category to the prediction "
               "(intra-op schedules; staged ones are not measured)");
  costs::add_precision_options(app, flags.precision);
  app.add_flag("--train", flags.train,
               "train with a training plan: forward, loss, backward, gradient syncs and the optimizer step");
  app.add_option("--steps", flags.steps, "with --train: optimizer steps, each on the same batch")->capture_default_str();
  app.add_option("--lr", flags.lr, "with --train: learning rate")->capture_default_str();
  app.add_option("--optimizer", flags.optimizer, "with --train: sgd or adam (torch.optim.Adam's defaults)")
      ->capture_default_str();
  app.set_version_flag("--version", version, "print the version and the git commit of this build");
  app.fallthrough();  // before the subcommands, which inherit it: options may follow the model
  ir::add_model_subcommands(app, flags.model);
  app.require_subcommand(1);
  int code = 0;
  try {
    app.parse(argc, argv);
    flags.planning_options = app.count("--mesh") + app.count("--stage-balance") + app.count("--cost-model") > 0;
    flags.training_options = app.count("--steps") + app.count("--lr") + app.count("--optimizer") > 0;
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
