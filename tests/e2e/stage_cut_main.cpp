// `stage_cut` (tests only): writes a pipeline-staged schedule
// ("shardsynth.staged_schedule/1") for the staged runtime tests, standing in
// for the stage planner. It cuts the model's nodes, in graph order, into
// contiguous stages, plans each stage graph on the sub-mesh and lists the
// transfers, with the sender's spec of "<tensor>:send" and the bytes one
// sending device holds.
//
//   stage_cut --mesh 4x2 --stages 4 --out staged.json gpt2 --layers 2 ...
//   stage_cut --mesh 3x2 --cuts h.0.ln_2,h.0.mlp.act --pin 1:h.0.residual_1=S0RR ...
//
// --stages S cuts evenly by node count; --cuts names the first node of
// stages 1..S-1. --plan synth (default) synthesizes each stage (synth::
// synthesize, with the --pin STAGE:TENSOR=SPEC pins of that stage, so sender
// and receiver specs can be made to differ); --plan replicated keeps every
// tensor whole. Cost figures other than the stage plans' are left at 0.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "costs/cost_model.hpp"
#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "ir/mesh.hpp"
#include "ir/model_cli.hpp"
#include "ir/op_table.hpp"
#include "ir/spec.hpp"
#include "ir/staged_schedule.hpp"
#include "synth/synthesizer.hpp"

namespace {

using namespace shardsynth;

struct Flags {
  std::string mesh = "2";                 // --mesh: the whole mesh, axis 0 = stages
  int stages = 0;                         // --stages: cut evenly by node count (0: use --cuts)
  std::string cuts;                       // --cuts: comma list of the first node of stages 1..S-1
  std::string plan = "synth";             // --plan: synth or replicated
  std::vector<std::string> pins;          // --pin STAGE:TENSOR=SPEC
  std::string cost_model = "alpha-beta";  // --cost-model
  int micro_batches = 1;                  // --micro-batches recorded in the file
  std::string out;                        // --out FILE
  ir::ModelFlags model;                   // model subcommand flags
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find(sep, start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// The graph's node names in graph order, cut into stages.
std::vector<std::vector<std::string>> cut(const ir::Graph& graph, const Flags& flags, int stages) {
  std::vector<std::string> order;
  for (ir::Vertex v : graph.topological_order()) order.push_back(graph.node(v).name);
  std::vector<std::size_t> starts = {0};
  if (flags.stages > 0) {
    for (int s = 1; s < stages; ++s) starts.push_back(order.size() * s / stages);
  } else {
    for (const auto& name : split(flags.cuts, ',')) {
      std::size_t at = 0;
      while (at < order.size() && order[at] != name) ++at;
      if (at == order.size()) throw ir::InputError("--cuts: no node '" + name + "'");
      if (at <= starts.back()) throw ir::InputError("--cuts: '" + name + "' is not after the previous cut");
      starts.push_back(at);
    }
  }
  if (static_cast<int>(starts.size()) != stages) {
    throw ir::InputError("the mesh's axis 0 has " + std::to_string(stages) + " groups but the cuts make " +
                         std::to_string(starts.size()) + " stages");
  }
  starts.push_back(order.size());
  std::vector<std::vector<std::string>> out;
  for (int s = 0; s < stages; ++s) out.emplace_back(order.begin() + starts[s], order.begin() + starts[s + 1]);
  return out;
}

// Every tensor of `graph` replicated, no directives.
ir::Schedule replicated_schedule(const ir::Graph& graph, const ir::Mesh& mesh, const std::string& cost_model) {
  ir::Schedule schedule{mesh.shape, cost_model, 0, false, {}, {}};
  auto add = [&](const std::string& name, const ir::TensorType& type) {
    schedule.specs.push_back({name, ir::to_string(ir::replicated(static_cast<int>(type.shape.size())), mesh.rank())});
  };
  for (ir::Vertex v : graph.topological_order()) {
    const ir::Node& node = graph.node(v);
    add(node.name, node.type);
    for (const ir::Param& p : node.params) add(node.name + "." + p.name, p.type);
  }
  return schedule;
}

std::string spec_of(const ir::Schedule& schedule, const std::string& tensor) {
  for (const auto& t : schedule.specs) {
    if (t.tensor == tensor) return t.spec;
  }
  throw ir::InputError("stage plan has no spec for '" + tensor + "'");
}

int run(const Flags& flags, const std::string& model_name) {
  const ir::Graph graph = ir::build_model(flags.model, model_name);
  const ir::Mesh mesh = ir::parse_mesh(flags.mesh);
  std::string sub_text;
  for (int a = 1; a < mesh.rank(); ++a) sub_text += (sub_text.empty() ? "" : "x") + std::to_string(mesh.shape[a]);
  const ir::Mesh sub = ir::parse_mesh(sub_text.empty() ? "1" : sub_text);
  const int stages = static_cast<int>(mesh.shape[0]);
  if (flags.plan != "synth" && flags.plan != "replicated") throw ir::InputError("--plan '" + flags.plan + "': synth or replicated");
  const auto cost_model = costs::make_cost_model(flags.cost_model);
  std::vector<std::vector<synth::Pin>> pins(stages);
  for (const auto& text : flags.pins) {
    const std::size_t colon = text.find(':');
    int stage = -1;
    try {
      stage = colon == std::string::npos ? -1 : std::stoi(text.substr(0, colon));
    } catch (const std::exception&) {
    }
    if (stage < 0 || stage >= stages) throw ir::InputError("--pin '" + text + "': expected STAGE:TENSOR=SPEC with a stage below " + std::to_string(stages));
    if (flags.plan != "synth") throw ir::InputError("--pin '" + text + "' needs --plan synth");
    pins[stage].push_back(synth::parse_pin(text.substr(colon + 1)));
  }

  ir::StagedSchedule staged;
  staged.mesh = mesh.shape;
  staged.cost_model = flags.cost_model;
  staged.balance = "cuts";
  staged.micro_batches = flags.micro_batches;
  std::vector<ir::Graph> graphs;
  for (auto& nodes : cut(graph, flags, stages)) {
    ir::Stage stage;
    stage.index = static_cast<int>(staged.stages.size());
    stage.nodes = std::move(nodes);
    graphs.push_back(ir::stage_graph(graph, stage.nodes));
    if (flags.plan == "replicated") {
      stage.schedule = replicated_schedule(graphs.back(), sub, flags.cost_model);
    } else {
      synth::SynthOptions options;
      options.pins = pins[stage.index];
      stage.schedule = synth::synthesize(graphs.back(), sub, *cost_model, options).schedule;
    }
    stage.compute = stage.schedule.cost;
    staged.stages.push_back(std::move(stage));
  }
  for (int s = 0; s < stages; ++s) {
    const std::set<std::string> own(staged.stages[s].nodes.begin(), staged.stages[s].nodes.end());
    for (ir::Vertex v : graphs[s].topological_order()) {
      const std::string& name = graphs[s].node(v).name;
      if (!name.ends_with(ir::kSendSuffix)) continue;
      const std::string tensor = name.substr(0, name.size() - std::string(ir::kSendSuffix).size());
      const std::string spec = spec_of(staged.stages[s].schedule, name);
      const ir::TensorType& type = graph.node(*graph.find(tensor)).type;
      const auto local = ir::local_shape(type.shape, ir::parse_spec(spec, sub.rank()), sub);
      const int64_t bytes = ir::num_elements(local) * ir::dtype_bytes(type.dtype);
      for (int t = s + 1; t < stages; ++t) {
        const auto placeholder = graphs[t].find(tensor);
        if (placeholder && graphs[t].node(*placeholder).kind == ir::kPlaceholder) {
          staged.transfers.push_back({tensor, s, t, spec, bytes, 0});
        }
      }
    }
  }
  ir::write_file_atomic(flags.out, ir::to_json(staged).dump(2) + "\n");
  std::printf("stage_cut: %d stages, %zu transfers -> %s\n", stages, staged.transfers.size(), flags.out.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stage_cut: a staged schedule from explicit cuts (tests only)", "stage_cut"};
  Flags flags;
  app.add_option("--mesh", flags.mesh, "the whole mesh; axis 0 indexes stages")->capture_default_str();
  auto* stages = app.add_option("--stages", flags.stages, "cut evenly by node count into this many stages");
  app.add_option("--cuts", flags.cuts, "comma list: the first node of stages 1..S-1")->excludes(stages);
  app.add_option("--plan", flags.plan, "synth or replicated")->capture_default_str();
  app.add_option("--pin", flags.pins, "STAGE:TENSOR=SPEC, a pin for that stage's synthesis (repeatable)");
  app.add_option("--cost-model", flags.cost_model, "alpha-beta or slapo")->capture_default_str();
  app.add_option("--micro-batches", flags.micro_batches, "micro-batches recorded in the file")->capture_default_str();
  app.add_option("--out", flags.out, "the staged schedule JSON to write")->required();
  ir::add_model_subcommands(app, flags.model);
  app.require_subcommand(1);
  app.fallthrough();
  try {
    app.parse(argc, argv);
    return run(flags, app.get_subcommands().front()->get_name());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const ir::InputError& e) {
    std::fprintf(stderr, "stage_cut: error: %s\n", e.what());
    return 2;
  }
}
