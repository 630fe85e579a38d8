#include "synth/cli/flags.hpp"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "ir/cli_numbers.hpp"
#include "ir/device.hpp"
#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "ir/json_field.hpp"

namespace shardsynth::synth::cli {
namespace {

// When the process started (static initialization), for --time-limit.
const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

// The value a flag's word names; one line listing the known words when it names none.
template <typename T>
T one_of(const std::string& word, const std::vector<std::pair<std::string, T>>& known, const std::string& what) {
  std::string names;
  for (const auto& [name, value] : known) {
    if (name == word) return value;
    names += (names.empty() ? "" : ", ") + name;
  }
  throw ir::InputError("unknown " + what + " '" + word + "' (known: " + names + ")");
}

}  // namespace

ir::Mesh make_mesh(const Flags& flags) {
  ir::Mesh mesh = flags.mesh_file.empty() ? ir::parse_mesh(flags.mesh)
                                          : ir::mesh_from_json(ir::read_file(flags.mesh_file), flags.mesh_file);
  ir::set_links(mesh, flags.bandwidth, flags.latency);
  if (!flags.device.empty()) ir::apply_device(mesh, flags.device);
  if (flags.peak_tflops > 0) {  // one peak for every dtype
    mesh.peak_tflops = flags.peak_tflops;
    mesh.dtype_peak_tflops.clear();
  }
  return mesh;
}

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ir::InputError(where + ": not valid JSON (" + ir::json_parse_failure(e) + ")");
  }
}

CegisOptions cegis_options(const Flags& flags) {
  CegisOptions options;
  options.max_iterations = flags.max_iterations;
  options.reduce = !flags.no_reduce;
  options.dual_bound = !flags.no_dual;
  options.lp_bound = !flags.no_lp;
  options.elimination = !flags.no_elimination;
  if (flags.branching) options.lp_branching = BranchingMode::always;
  if (flags.no_branching) options.lp_branching = BranchingMode::never;
  options.network_work = flags.network_work;
  options.relax_usage = flags.relax;
  if (flags.time_limit > 0) {
    // The limit counts from the start of the process: loading and lowering
    // are inside it, and 1% of it (at least 0.8 s) is kept for writing the
    // outputs and leaving: Llama 3 70B on 8x8 printed its plan 0.24 s after
    // a 120 s deadline and the kernel took 0.5 s more to unmap the 3.8 GB Z3
    // had grown. A search that Z3 keeps past its deadline is abandoned
    // kAbandonGrace (0.4 s) later (time_guard.hpp), so the reserve holds the
    // grace and the exit: with 0.2 s, 816-node problems ended 0.2 to 0.3 s
    // past a 20 s limit; with 0.6 s, S (28,526 nodes, 420 MB) ended 0.15 s
    // past a 60 s limit at load 17 (in a 20 s run at that load, its search
    // was abandoned and printed its verdict 0.46 s after the deadline; the
    // exit of a process of that size, beside the abandoned threads, follows).
    const double reserve = std::max(0.8, 0.01 * flags.time_limit);
    options.deadline = kProcessStart + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                           std::chrono::duration<double>(std::max(0.01, flags.time_limit - reserve)));
  }
  options.threads = flags.threads > 0 ? flags.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.seed = static_cast<uint64_t>(flags.seed);
  options.anytime = one_of<AnytimeMode>(
      flags.anytime, {{"auto", AnytimeMode::automatic}, {"always", AnytimeMode::always}, {"never", AnytimeMode::never}},
      "--anytime");
  options.strategy = one_of<SearchStrategy>(flags.strategy,
                                            {{"descent", SearchStrategy::descent},
                                             {"bisect", SearchStrategy::bisect},
                                             {"optimize", SearchStrategy::optimize}},
                                            "strategy");
  options.encoding = one_of<EncodingKind>(flags.encoding,
                                          {{"if-chains", EncodingKind::if_chains},
                                           {"one-hot", EncodingKind::one_hot},
                                           {"pseudo-boolean", EncodingKind::pseudo_boolean}},
                                          "encoding");
  options.probes = one_of<ProbeMode>(
      flags.probes, {{"assumptions", ProbeMode::assumptions}, {"push-pop", ProbeMode::push_pop}}, "probe mode");
  return options;
}

void add_flags(CLI::App& app, Flags& flags) {
  app.add_option("--mesh", flags.mesh, "device mesh: 8 (1-D) or 2x4 (2-D; axis 0 crosses nodes)")->capture_default_str();
  app.add_option("--mesh-file", flags.mesh_file, "read the mesh (shape, links, peak, memory) from this JSON file");
  app.add_option("--bandwidth", flags.bandwidth, "link bandwidth per mesh axis in GB/s, e.g. 25,200");
  app.add_option("--latency", flags.latency, "latency per ring step per mesh axis in microseconds, e.g. 5,1");
  app.add_option("--peak-tflops", flags.peak_tflops, "per-device peak TFLOP/s for every dtype (default 312; overrides --device)")
      ->check(ir::positive_number());
  app.add_option("--device", flags.device, "device preset with a datasheet peak per dtype: h100, a100 (default: none)");
  costs::add_precision_options(app, flags.precision);
  app.add_option("--cost-model", flags.cost_model, "alpha-beta (nanoseconds) or slapo (the PR's volume model)")
      ->capture_default_str();
  app.add_option("--mode", flags.mode, "inference or training")->capture_default_str();
  app.add_option("--memory", flags.memory, "per-device memory budget in bytes (above 0; default: none)")
      ->check(ir::positive_number());
  app.add_flag("--memory-report", flags.memory_report,
               "print the plan's memory per device (parameters, gradients, optimizer state, activations, peak) and add "
               "it to the schedule");
  app.add_flag("--no-recompute", flags.no_recompute,
               "training under --memory: save every activation for the backward instead of letting the solver "
               "recompute some (the plan's sch[...].checkpoint() directives)");
  app.add_flag("--no-family-starts", flags.no_family_starts,
               "under --memory without --plan: search for the optimum directly, without first searching each plan "
               "family briefly and starting from the cheapest family plan");
  app.add_option("--schedule", flags.schedule_path,
                 "write the schedule as JSON to this file (with `synth evaluate`: read the schedule to score)");
  app.add_option("--plan", flags.plan,
                 "restrict the search to a plan family (data-parallel, zero1, zero2, fsdp, megatron, megatron-fsdp), or draw one random legal plan (random, with --seed)");
  app.add_option("--pin", flags.pins, "fix a tensor's spec: fc1.weight=SR (repeatable; TENSOR!=SPEC forbids)");
  app.add_option("--forbid", flags.forbids, "forbid a spec for a tensor: output=SR (repeatable)");
  app.add_option("--max-iterations", flags.max_iterations, "stop after this many solver calls (0: until proven)")
      ->check(ir::non_negative_number());
  app.add_option("--strategy", flags.strategy,
                 "descent (the PR's: cheaper than best), bisect (halve the gap to the lower bound) or optimize (z3::optimize)")
      ->capture_default_str();
  app.add_flag("--no-reduce", flags.no_reduce, "hand Z3 the whole problem, without the exact reductions");
  app.add_flag("--no-dual", flags.no_dual, "no lower-bound pass: no decoded first incumbent, no pruning at the gap");
  app.add_flag("--no-lp", flags.no_lp, "no LP relaxation: no LP bound, no LP-rounded plan, no reduced-cost fixing");
  app.add_flag("--no-elimination", flags.no_elimination, "no Pareto elimination after the LP (under --memory: the exact search by elimination that tracks the memory rows)");
  auto* branching = app.add_flag("--branching", flags.branching,
                                 "branch and bound on the LP right after the LP step, before the Pareto elimination (under a usage limit; "
                                 "by default it runs only once a Z3 probe outgrows its resource budget)");
  app.add_flag("--no-branching", flags.no_branching, "no branch and bound on the LP, not even by default")->excludes(branching);
  app.add_option("--network-work", flags.network_work,
                 "under a usage limit: values the branch and bound on the folded problem as a cost network with knapsack rows "
                 "may scan after the LP step, a sixteenth of it before the anytime search (its root also raises the lower "
                 "bound; 0: no such step)")
      ->capture_default_str()
      ->check(ir::non_negative_number());
  app.add_flag("--relax-usage", flags.relax, "with a usage limit, first solve without it (its optimum is kept when it fits)");
  app.add_option("--threads", flags.threads, "anytime searches run side by side, one thread each (0: one per core)")
      ->check(ir::non_negative_number());
  app.add_option("--seed", flags.seed,
                 "the anytime search's first seed (the same seed and --threads give the same plans); with --plan random, the plan's seed")
      ->check(ir::non_negative_number());
  app.add_option("--anytime", flags.anytime,
                 "run the anytime search (folding, Lagrangian search, Z3 on regions) before the exact loop: auto (with a usage limit), always or never")
      ->capture_default_str();
  app.add_option("--time-limit", flags.time_limit, "stop after this many seconds with the best plan so far, its lower bound and gap (0: no limit)")
      ->check(ir::non_negative_number());
  app.add_option("--memory-limit", flags.memory_limit_mb,
                 "Z3 memory limit in MB: past it the search stops with the best plan so far, its lower bound and gap (0: none)")
      ->check(ir::non_negative_number());
  app.add_option("--encoding", flags.encoding, "Z3 encoding: if-chains (Int per node) or one-hot (Bool per strategy)")
      ->capture_default_str();
  app.add_option("--probes", flags.probes, "how bisection probes are withdrawn: assumptions or push-pop")->capture_default_str();
  app.add_option("--iopddl", flags.iopddl, "solve this IOPDDL contest problem (.json or .json.gz) instead of a model");
  app.add_option("--solution", flags.solution_path, "write the best assignment in the contest's format to this file");
  app.add_option("--export-problem", flags.export_path, "write the problem in the IOPDDL contest format to this file");
  app.add_option("--verify", flags.verify_path, "with --iopddl: score this solution file under the contest's rules instead of searching");
  app.add_option("--trace", flags.trace_path, "write every search step as JSON lines to this file (re-print: synth trace FILE)");
  app.add_option("--dot", flags.dot_path, "write the plan as a Graphviz digraph to this file");
  app.add_option("--svg", flags.svg_path, "render the plan with Graphviz's dot to this SVG file, the cost plot to <name>.cost.svg and the "
                 "memory per time step, with the budget, to <name>.memory.svg");
  app.add_option("--stages", flags.stages, "pipeline stages S, one per group of mesh axis 0 (--mesh 4x2 --stages 4: 4 stages of 2 devices)")
      ->check(ir::positive_number());
  app.add_option("--stage-balance", flags.stage_balance, "with --stages: cost (exact DP) or params (fairscale's rule)")
      ->capture_default_str();
  app.add_option("--micro-batches", flags.micro_batches, "with --stages: micro-batches M for the pipeline time")
      ->check(ir::positive_number())->capture_default_str();
  app.add_flag("--quiet,-q", flags.quiet, "print only the directives");
  app.add_flag("--verbose,-v", flags.verbose, "log solver timings to stderr");
}

}  // namespace shardsynth::synth::cli
