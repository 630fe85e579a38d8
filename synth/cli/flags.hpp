#pragma once
// The `synth` command's flags (one field per flag), how they are declared
// to CLI11, and the library options they turn into. A new flag: a field
// here, its add_option line in flags.cpp, and where it is read.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "costs/precision_cli.hpp"
#include "ir/mesh.hpp"
#include "ir/model_cli.hpp"
#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth::cli {

struct Flags {
  std::string mesh = "8";                // --mesh
  std::string mesh_file;                 // --mesh-file
  std::string bandwidth;                 // --bandwidth, GB/s per axis
  std::string latency;                   // --latency, us per axis
  double peak_tflops = 0;                // --peak-tflops; 0 = the mesh default
  std::string device;                    // --device: a preset's peak per dtype (ir/device.hpp); empty = none
  costs::PrecisionFlags precision;       // --reduce-dtype, --master-dtype, --loss-scale
  std::string cost_model = "alpha-beta"; // --cost-model
  std::string mode = "inference";        // --mode
  int64_t memory = 0;                    // --memory, bytes per device (above 0); 0 = not given, no budget
  bool memory_report = false;            // --memory-report: the plan's memory per device, printed and in the schedule
  bool no_recompute = false;             // --no-recompute: save every training activation for the backward
  bool no_family_starts = false;         // --no-family-starts: under a budget, search without the families' plans first
  std::string schedule_path;             // --schedule
  bool quiet = false;                    // --quiet
  bool verbose = false;                  // --verbose
  int max_iterations = 0;                // --max-iterations
  std::string strategy = "bisect";       // --strategy
  bool no_reduce = false;                // --no-reduce
  ir::ModelFlags model;                  // the model subcommand's flags
  std::string plan;                      // --plan: a built-in plan family
  std::string iopddl;                    // --iopddl: solve this contest problem instead of a model
  std::string solution_path;             // --solution: write the best assignment in contest format
  std::string export_path;               // --export-problem: write the problem in contest format
  std::string verify_path;               // --verify: score this contest solution instead of searching
  double time_limit = 0;                 // --time-limit, seconds; 0 = none
  int64_t memory_limit_mb = 0;           // --memory-limit, megabytes of Z3 memory; 0 = none
  std::string encoding = "pseudo-boolean";  // --encoding
  std::string probes = "assumptions";    // --probes
  bool no_dual = false;                  // --no-dual
  bool no_lp = false;                    // --no-lp
  bool no_elimination = false;           // --no-elimination
  bool branching = false;                // --branching
  bool no_branching = false;             // --no-branching
  long network_work = 4'000'000'000;       // --network-work: values the cost network's search may scan; 0 = no network step
  bool relax = false;                    // --relax-usage
  int threads = 0;                       // --threads: anytime searches side by side; 0 = one per core
  int64_t seed = 1;                      // --seed: the anytime search's first seed
  std::string anytime = "auto";          // --anytime: auto, always or never
  std::vector<std::string> pins;         // --pin TENSOR=SPEC (or TENSOR!=SPEC)
  std::vector<std::string> forbids;      // --forbid TENSOR=SPEC
  bool evaluate = false;                 // `synth evaluate ...`: score --schedule instead of searching
  std::string trace_path;                // --trace: write the search as JSON lines (docs/trace_jsonl.md)
  std::string dot_path;                  // --dot: write the plan as a Graphviz digraph
  std::string svg_path;                  // --svg: render the plan (and the cost and memory plots beside it) with dot
  int stages = 0;                        // --stages: pipeline stages (mesh axis 0); 0 = no pipeline
  std::string stage_balance = "cost";    // --stage-balance: params or cost
  int micro_batches = 1;                 // --micro-batches, for the pipeline time
};

// Declares every flag of `synth` on `app`, bound to `flags`.
void add_flags(CLI::App& app, Flags& flags);

// The mesh: --mesh or --mesh-file, with --bandwidth, --latency and --peak-tflops.
ir::Mesh make_mesh(const Flags& flags);

// The solver's options from the flags; --time-limit counts from the process's start.
CegisOptions cegis_options(const Flags& flags);

// `text` as JSON; one line naming `where` when it is not.
nlohmann::json parse_json(const std::string& text, const std::string& where);

}  // namespace shardsynth::synth::cli
