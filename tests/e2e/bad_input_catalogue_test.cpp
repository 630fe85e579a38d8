// The bad-input catalogue: every class of bad input fed to the real `synth`,
// `shard-run` (under mpirun) and `synth --iopddl`. Each case must end with
// exit code 2, exactly one line on stderr naming the offending value and
// where it is, and no file left in the output directory.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/run_command.hpp"
#include "ir/graph_json.hpp"
#include "ir/models.hpp"

using namespace shardsynth::testing;
using nlohmann::json;

namespace {

enum class Tool { synth, shard_run };

struct BadInput {
  std::string name;                          // what is wrong, for the failure report
  Tool tool;                                 // which binary runs it
  std::map<std::string, std::string> files;  // input file name (under IN/) -> content
  std::string args;                          // arguments; IN/ and OUT/ are replaced by the directories
  std::vector<std::string> needles;          // every one must appear on the stderr line
};

// A small MLP as graph JSON, the base that the graph cases break.
json mlp_graph() {
  shardsynth::ir::MlpConfig config;
  config.batch = 4;
  config.seq = 8;
  config.hidden = 16;
  config.ffn = 32;
  return shardsynth::ir::graph_to_json(shardsynth::ir::build_mlp(config));
}

// The node of `graph` named `name`.
json& node(json& graph, const std::string& name) {
  for (json& n : graph["nodes"]) {
    if (n["name"] == name) return n;
  }
  throw std::runtime_error("no node " + name);
}

std::string broken_graph(const std::function<void(json&)>& edit) {
  json graph = mlp_graph();
  edit(graph);
  return graph.dump(1);
}

// A schedule for the catalogue's MLP on a 1-device mesh: every tensor replicated.
json mlp_schedule() {
  json specs = json::array();
  for (const char* t : {"x", "fc1", "fc1.weight", "fc1.bias", "gelu", "fc2", "fc2.weight", "fc2.bias", "output"}) {
    specs.push_back({{"tensor", t}, {"spec", std::string(t).find('.') != std::string::npos ? "R" : "RRR"}});
  }
  for (json& s : specs) {
    if (s["tensor"] == "fc1.weight" || s["tensor"] == "fc2.weight") s["spec"] = "RR";
  }
  return {{"format", "shardsynth.schedule/1"}, {"mesh", {1}},           {"cost_model", "alpha-beta"}, {"cost", 0},
          {"proven_optimal", false},          {"directives", json::array()}, {"specs", specs}};
}

std::string broken_schedule(const std::function<void(json&)>& edit) {
  json schedule = mlp_schedule();
  edit(schedule);
  return schedule.dump(1);
}

// A two-node IOPDDL problem with one edge.
json iopddl_problem() {
  return {{"problem",
           {{"name", "tiny"},
            {"nodes", {{"intervals", {{0, 2}, {1, 3}}}, {"costs", {{1, 2}, {3, 4, 5}}}, {"usages", {{1, 1}, {2, 2, 2}}}}},
            {"edges", {{"nodes", {{0, 1}}}, {"costs", {{0, 1, 2, 3, 4, 5}}}}},
            {"usage_limit", 10}}}};
}

std::string broken_problem(const std::function<void(json&)>& edit) {
  json problem = iopddl_problem();
  edit(problem);
  return problem.dump();
}

// A safetensors file: the 8-byte little-endian header length, the header, the data.
std::string safetensors(const std::string& header, std::size_t data_bytes) {
  std::string bytes(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return bytes + header + std::string(data_bytes, '\0');
}

const std::string kMlpFlags = "mlp --batch 4 --seq 8 --hidden 16 --ffn 32";

std::vector<BadInput> catalogue() {
  const Tool synth = Tool::synth, run = Tool::shard_run;
  const std::string graph = "IN/g.json --schedule OUT/plan.json --solution OUT/sol.json";
  const std::string plan = "--schedule OUT/plan.json --solution OUT/sol.json ";
  const std::string problem = "--iopddl IN/p.json --solution OUT/sol.json --export-problem OUT/export.json";
  const std::string runs = "--schedule IN/s.json --output OUT/out.safetensors ";
  const std::string good_schedule = mlp_schedule().dump();
  const std::string training_schedule = broken_schedule([](json& j) { j["mode"] = "training"; });
  std::vector<BadInput> c;
  // JSON syntax errors and truncated files.
  const std::string whole = mlp_graph().dump();
  c.push_back({"graph: truncated", synth, {{"g.json", whole.substr(0, whole.size() / 2)}}, graph, {"g.json", "not valid JSON"}});
  c.push_back({"graph: syntax error", synth, {{"g.json", "{\"format\": \"shardsynth-graph\",, }"}}, graph, {"g.json", "byte"}});
  c.push_back({"graph: empty file", synth, {{"g.json", ""}}, graph, {"g.json", "not valid JSON"}});
  c.push_back({"graph: not an object", synth, {{"g.json", "[1, 2]"}}, graph, {"g.json", "expected a JSON object"}});
  c.push_back({"schedule: truncated", run, {{"s.json", good_schedule.substr(0, 40)}}, runs + kMlpFlags, {"s.json", "not valid JSON"}});
  c.push_back({"iopddl: truncated", synth, {{"p.json", iopddl_problem().dump().substr(0, 30)}}, problem, {"p.json", "not valid JSON"}});
  c.push_back({"iopddl: truncated gzip", synth, {{"p.json", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\x56", 12)}},
               problem, {"p.json"}});
  c.push_back({"mesh file: syntax error", synth, {{"m.json", "{\"shape\": [2,"}}, plan + "--mesh-file IN/m.json " + kMlpFlags,
               {"m.json", "not valid JSON"}});
  // A number no double holds: json::parse throws out_of_range, not parse_error
  // (found by fuzzing: shard-run died in std::terminate, synth said "internal error").
  c.push_back({"graph: number beyond a double", synth, {{"g.json", "{\"format\": 1E400}"}}, graph, {"g.json", "not valid JSON"}});
  c.push_back({"schedule: number beyond a double", run, {{"s.json", "{\"cost\": -1e999}"}}, runs + kMlpFlags,
               {"s.json", "not valid JSON"}});
  c.push_back({"iopddl: number beyond a double", synth, {{"p.json", "{\"problem\": [1E400]}"}}, problem, {"p.json", "not valid JSON"}});
  c.push_back({"mesh file: number beyond a double", synth, {{"m.json", "{\"shape\": [2], \"peak_tflops\": 1e309}"}},
               plan + "--mesh-file IN/m.json " + kMlpFlags, {"m.json", "not valid JSON"}});
  c.push_back({"safetensors: header number beyond a double", run,
               {{"s.json", good_schedule}, {"w.st", safetensors("{\"x\": 1E400}", 0)}}, runs + "--params IN/w.st " + kMlpFlags,
               {"w.st", "not valid JSON"}});
  // Missing or mistyped fields.
  c.push_back({"graph: missing nodes", synth, {{"g.json", R"({"format": "shardsynth-graph", "version": 1})"}}, graph,
               {"g.json", "'nodes'"}});
  c.push_back({"graph: missing kind", synth, {{"g.json", broken_graph([](json& g) { node(g, "fc1").erase("kind"); })}}, graph,
               {"g.json", "node 'fc1'", "'kind'", "missing"}});
  c.push_back({"graph: shape is a string", synth, {{"g.json", broken_graph([](json& g) { node(g, "gelu")["shape"] = "4x8"; })}},
               graph, {"g.json", "node 'gelu'", "'shape'", "4x8"}});
  c.push_back({"graph: unknown dtype", synth, {{"g.json", broken_graph([](json& g) { node(g, "x")["dtype"] = "float8"; })}}, graph,
               {"g.json", "node 'x'", "'dtype'", "float8"}});
  c.push_back({"graph: unknown field", synth, {{"g.json", broken_graph([](json& g) { node(g, "fc2")["colour"] = 1; })}}, graph,
               {"g.json", "node 'fc2'", "colour"}});
  c.push_back({"graph: wrong version", synth, {{"g.json", broken_graph([](json& g) { g["version"] = 7; })}}, graph,
               {"g.json", "'version'", "7"}});
  c.push_back({"graph: param shape mistyped", synth,
               {{"g.json", broken_graph([](json& g) { node(g, "fc1")["params"][0]["shape"] = {16, "x"}; })}}, graph,
               {"g.json", "node 'fc1'", "'shape'", "\"x\""}});
  c.push_back({"schedule: missing mesh", run, {{"s.json", broken_schedule([](json& s) { s.erase("mesh"); })}}, runs + kMlpFlags,
               {"s.json", "'mesh'"}});
  c.push_back({"schedule: cost is a string", run, {{"s.json", broken_schedule([](json& s) { s["cost"] = "cheap"; })}},
               runs + kMlpFlags, {"s.json", "'cost'"}});
  c.push_back({"iopddl: missing edges", synth, {{"p.json", broken_problem([](json& p) { p["problem"].erase("edges"); })}}, problem,
               {"p.json", "'edges'"}});
  c.push_back({"iopddl: cost is a string", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["nodes"]["costs"][1][2] = "five"; })}}, problem,
               {"p.json", "nodes.costs[1]", "five"}});
  c.push_back({"iopddl: interval of three", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["nodes"]["intervals"][0] = {0, 1, 2}; })}}, problem,
               {"p.json", "nodes.intervals[0]"}});
  // Unknown op kinds.
  c.push_back({"graph: unknown op kind", synth, {{"g.json", broken_graph([](json& g) { node(g, "gelu")["kind"] = "frobnicate"; })}},
               graph, {"g.json", "frobnicate", "gelu"}});
  // Inconsistent shapes between producer and consumer.
  c.push_back({"graph: consumer shape disagrees", synth,
               {{"g.json", broken_graph([](json& g) { node(g, "gelu")["shape"] = {4, 8, 31}; })}}, graph,
               {"g.json", "node 'gelu'", "31"}});
  c.push_back({"graph: weight shape disagrees with input", synth,
               {{"g.json", broken_graph([](json& g) { node(g, "fc1")["params"][0]["shape"] = {32, 17}; })}}, graph,
               {"g.json", "node 'fc1'", "17"}});
  c.push_back({"graph: output shape disagrees", synth,
               {{"g.json", broken_graph([](json& g) { node(g, "output")["shape"] = {4, 8}; })}}, graph,
               {"g.json", "node 'output'"}});
  c.push_back({"graph: view without inputs", synth, {{"g.json", broken_graph([](json& g) {
                  node(g, "gelu")["kind"] = "view";
                  node(g, "gelu")["inputs"] = json::array();
                  node(g, "gelu")["attrs"] = {{"shape", {4, 8, 32}}};
                })}},
               graph, {"g.json", "node 'gelu'", "view"}});
  c.push_back({"iopddl: float cost beyond int64", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["nodes"]["costs"][0][1] = 1.1e116; })}}, problem,
               {"p.json", "nodes.costs[0]"}});
  // Cycles, dangling inputs and duplicate names.
  c.push_back({"graph: cycle", synth, {{"g.json", broken_graph([](json& g) { node(g, "fc1")["inputs"] = {"fc2"}; })}}, graph,
               {"g.json", "cycle"}});
  c.push_back({"graph: dangling input", synth, {{"g.json", broken_graph([](json& g) { node(g, "fc2")["inputs"] = {"nowhere"}; })}},
               graph, {"g.json", "node 'fc2'", "nowhere"}});
  c.push_back({"graph: duplicate name", synth, {{"g.json", broken_graph([](json& g) { node(g, "gelu")["name"] = "fc1"; })}}, graph,
               {"g.json", "duplicate", "fc1"}});
  c.push_back({"graph: tied to a missing param", synth,
               {{"g.json", broken_graph([](json& g) { node(g, "fc2")["params"][0]["tied_to"] = "fc9.weight"; })}}, graph,
               {"g.json", "node 'fc2'", "fc9.weight"}});
  // A dim that does not divide by a mesh axis when a spec needs it to.
  c.push_back({"schedule: spec does not divide", run,
               {{"s.json", broken_schedule([](json& s) {
                  s["mesh"] = {3};
                  s["specs"][0]["spec"] = "RRS";
                })}},
               runs + kMlpFlags, {"'x'", "16"}});
  c.push_back({"synth: pin does not divide", synth, {}, plan + "--mesh 3 --pin fc1=RRS " + kMlpFlags, {"fc1"}});
  c.push_back({"gpt2: heads do not divide the embedding", synth, {}, plan + "gpt2 --layers 1 --heads 5", {"5"}});
  // Zero, negative or absurd mesh, bandwidth, memory and sizes.
  c.push_back({"mesh: zero", synth, {}, plan + "--mesh 0 " + kMlpFlags, {"'0'"}});
  c.push_back({"mesh: negative", synth, {}, plan + "--mesh 2x-4 " + kMlpFlags, {"2x-4"}});
  c.push_back({"mesh: absurd", synth, {}, plan + "--mesh 1000000 " + kMlpFlags, {"1000000"}});
  c.push_back({"mesh: product overflows", synth, {}, plan + "--mesh 65536x65536 " + kMlpFlags, {"65536x65536"}});
  c.push_back({"mesh file: negative memory", synth, {{"m.json", R"({"shape": [2], "memory_bytes": -5})"}},
               plan + "--mesh-file IN/m.json " + kMlpFlags, {"m.json", "memory_bytes"}});
  c.push_back({"mesh file: zero bandwidth", synth, {{"m.json", R"({"shape": [2, 2], "bandwidth_gbps": [0, 10]})"}},
               plan + "--mesh-file IN/m.json " + kMlpFlags, {"m.json", "bandwidth_gbps"}});
  c.push_back({"bandwidth: negative", synth, {}, plan + "--bandwidth -3 " + kMlpFlags, {"-3"}});
  c.push_back({"bandwidth: not a number", synth, {}, plan + "--mesh 2x2 --bandwidth 10,nan " + kMlpFlags, {"nan"}});
  c.push_back({"latency: zero", synth, {}, plan + "--latency 0 " + kMlpFlags, {"'0'"}});
  c.push_back({"memory: budget below any plan", synth, {},
               "--schedule OUT/plan.json --export-problem OUT/export.json --memory 1000 --mode training " + kMlpFlags,
               {"no plan fits in 1000 bytes per device", "every plan needs at least"}});
  c.push_back({"memory: negative", synth, {}, plan + "--memory -1 " + kMlpFlags, {"-1"}});
  c.push_back({"memory: zero", synth, {}, plan + "--memory 0 " + kMlpFlags, {"--memory", "0"}});
  c.push_back({"peak: zero", synth, {}, plan + "--peak-tflops 0 " + kMlpFlags, {"0"}});
  c.push_back({"mlp: zero batch", synth, {}, plan + "mlp --batch 0", {"0"}});
  c.push_back({"mlp: sizes overflow int64", synth, {}, plan + "mlp --batch 4294967296 --seq 4294967296 --hidden 1024 --ffn 8",
               {"4294967296"}});
  c.push_back({"gpt2: vocab overflows", synth, {}, plan + "gpt2 --layers 1 --embd 4611686018427387904 --heads 1", {"4611686018427387904"}});
  c.push_back({"graph: shape overflows int64", synth,
               {{"g.json", broken_graph([](json& g) { node(g, "x")["shape"] = {4294967296LL, 4294967296LL, 16}; })}}, graph,
               {"g.json", "node 'x'", "int64"}});
  c.push_back({"graph: byte size overflows int64", synth,
               {{"g.json", broken_graph([](json& g) { node(g, "x")["shape"] = {1LL << 31, 1LL << 31, 16}; })}}, graph,
               {"g.json", "node 'x'"}});
  c.push_back({"iopddl: negative cost", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["nodes"]["costs"][0][0] = -1; })}}, problem,
               {"p.json", "nodes.costs[0]", "-1"}});
  c.push_back({"iopddl: cost above 10^18", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["edges"]["costs"][0][0] = 18000000000000000000ULL; })}}, problem,
               {"p.json", "edges.costs[0]", "18000000000000000000"}});
  c.push_back({"iopddl: negative usage limit", synth, {{"p.json", broken_problem([](json& p) { p["problem"]["usage_limit"] = -4; })}},
               problem, {"p.json", "usage_limit", "-4"}});
  c.push_back({"iopddl: reversed interval", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["nodes"]["intervals"][1] = {5, 1}; })}}, problem,
               {"p.json", "nodes.intervals[1]"}});
  c.push_back({"iopddl: usages count disagrees", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["nodes"]["usages"][1] = {1}; })}}, problem,
               {"p.json", "nodes.usages[1]"}});
  c.push_back({"iopddl: edge table size", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["edges"]["costs"][0] = {1, 2}; })}}, problem,
               {"p.json", "edges.costs[0]", "2 entries"}});
  c.push_back({"iopddl: edge to a missing node", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["edges"]["nodes"][0] = {0, 9}; })}}, problem,
               {"p.json", "edges.nodes[0]", "9"}});
  c.push_back({"iopddl: self edge", synth,
               {{"p.json", broken_problem([](json& p) { p["problem"]["edges"]["nodes"][0] = {1, 1}; })}}, problem,
               {"p.json", "edges.nodes[0]", "itself"}});
  // Schedules that refer to missing nodes or disagree with the graph.
  c.push_back({"schedule: directive on a missing node", run,
               {{"s.json", broken_schedule([](json& s) {
                  s["directives"].push_back({{"node", "fc7"}, {"kind", "sync"}, {"mode", "fwd_pre"}, {"sync_op_or_fn", "RRR->RRR"}});
                })}},
               runs + kMlpFlags, {"fc7"}});
  c.push_back({"schedule: spec of a missing tensor", run,
               {{"s.json", broken_schedule([](json& s) { s["specs"].push_back({{"tensor", "fc3"}, {"spec", "RR"}}); })}},
               runs + kMlpFlags, {"fc3"}});
  c.push_back({"schedule: spec rank disagrees", run,
               {{"s.json", broken_schedule([](json& s) { s["specs"][1]["spec"] = "RRRRR"; })}}, runs + kMlpFlags,
               {"fc1", "RRRRR"}});
  c.push_back({"schedule: unknown directive kind", run,
               {{"s.json", broken_schedule([](json& s) { s["directives"].push_back({{"node", "fc1"}, {"kind", "teleport"}}); })}},
               runs + kMlpFlags, {"directive 0", "teleport"}});
  c.push_back({"schedule: unknown sync mode", run,
               {{"s.json", broken_schedule([](json& s) {
                  s["directives"].push_back({{"node", "fc1"}, {"kind", "sync"}, {"mode", "bwd"}, {"sync_op_or_fn", "RRR->RRR"}});
                })}},
               runs + kMlpFlags, {"directive 0", "bwd"}});
  c.push_back({"schedule: bad spec text", run,
               {{"s.json", broken_schedule([](json& s) { s["specs"][0]["spec"] = "RQR"; })}}, runs + kMlpFlags, {"RQR"}});
  c.push_back({"schedule: mesh disagrees with ranks", run,
               {{"s.json", broken_schedule([](json& s) { s["mesh"] = {0}; })}}, runs + kMlpFlags, {"mesh", "0"}});
  c.push_back({"schedule: wrong format", run,
               {{"s.json", broken_schedule([](json& s) { s["format"] = "shardsynth.schedule/9"; })}}, runs + kMlpFlags,
               {"shardsynth.schedule/9"}});
  c.push_back({"evaluate: schedule for another graph", synth,
               {{"s.json", broken_schedule([](json& s) { s["specs"][1]["tensor"] = "h.0.attn"; })}},
               "evaluate --schedule IN/s.json --mesh 1 " + kMlpFlags, {"s.json", "'fc1'"}});
  // Safetensors files with bad headers or wrong shapes.
  c.push_back({"safetensors: shorter than 8 bytes", run, {{"s.json", good_schedule}, {"w.st", "abc"}},
               runs + "--params IN/w.st " + kMlpFlags, {"w.st", "3 bytes"}});
  c.push_back({"safetensors: header length beyond file", run,
               {{"s.json", good_schedule}, {"w.st", std::string("\xff\x00\x00\x00\x00\x00\x00\x00{}", 10)}},
               runs + "--params IN/w.st " + kMlpFlags, {"w.st", "255"}});
  c.push_back({"safetensors: header not JSON", run, {{"s.json", good_schedule}, {"w.st", safetensors("{\"a\": ", 0)}},
               runs + "--params IN/w.st " + kMlpFlags, {"w.st", "not valid JSON"}});
  c.push_back({"safetensors: unknown dtype", run,
               {{"s.json", good_schedule}, {"w.st", safetensors(R"({"fc1.weight": {"dtype": "F8", "shape": [1], "data_offsets": [0, 1]}})", 1)}},
               runs + "--params IN/w.st " + kMlpFlags, {"w.st", "fc1.weight", "F8"}});
  c.push_back({"safetensors: offsets out of range", run,
               {{"s.json", good_schedule},
                {"w.st", safetensors(R"({"fc1.bias": {"dtype": "F32", "shape": [32], "data_offsets": [0, 128]}})", 16)}},
               runs + "--params IN/w.st " + kMlpFlags, {"w.st", "fc1.bias", "128"}});
  c.push_back({"safetensors: wrong parameter shape", run,
               {{"s.json", good_schedule},
                {"w.st", safetensors(R"({"fc1.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})", 16)}},
               runs + "--params IN/w.st " + kMlpFlags, {"w.st", "fc1.weight", "[2, 2]"}});
  c.push_back({"safetensors: wrong input shape", run,
               {{"s.json", good_schedule}, {"w.st", safetensors(R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 8)}},
               runs + "--input IN/w.st " + kMlpFlags, {"w.st", "'x'", "[2]"}});
  c.push_back({"safetensors: shape overflows", run,
               {{"s.json", good_schedule},
                {"w.st", safetensors(R"({"x": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 8]}})", 8)}},
               runs + "--input IN/w.st " + kMlpFlags, {"w.st", "'x'"}});
  // Unreadable and unwritable paths.
  c.push_back({"graph: no such file", synth, {}, "IN/missing.json --schedule OUT/plan.json", {"missing.json"}});
  c.push_back({"graph: a directory", synth, {{"d/keep", ""}}, "IN/d --schedule OUT/plan.json", {"IN/d"}});
  c.push_back({"iopddl: no such file", synth, {}, "--iopddl IN/missing.json.gz --solution OUT/sol.json", {"missing.json.gz"}});
  c.push_back({"schedule: no such file", run, {}, "--schedule IN/missing.json --output OUT/out.safetensors " + kMlpFlags,
               {"missing.json"}});
  c.push_back({"params: no such file", run, {{"s.json", good_schedule}}, runs + "--params IN/none.st " + kMlpFlags, {"none.st"}});
  c.push_back({"synth: unwritable schedule", synth, {}, "--solution OUT/sol.json --schedule OUT/no/dir/plan.json " + kMlpFlags,
               {"OUT/no/dir/plan.json"}});
  c.push_back({"synth: unwritable solution", synth, {}, "--schedule OUT/plan.json --solution OUT/no/dir/sol.json " + kMlpFlags,
               {"OUT/no/dir/sol.json"}});
  c.push_back({"iopddl: unwritable export", synth, {{"p.json", iopddl_problem().dump()}},
               "--iopddl IN/p.json --solution OUT/sol.json --export-problem OUT/no/dir/e.json", {"OUT/no/dir/e.json"}});
  c.push_back({"shard-run: unwritable output", run, {{"s.json", good_schedule}},
               "--schedule IN/s.json --output OUT/no/dir/out.safetensors " + kMlpFlags, {"OUT/no/dir/out.safetensors"}});
  // Mixed precision: a policy or a dtype that cannot be run as asked.
  c.push_back({"precision: reduce narrower than compute", synth, {},
               plan + "--mode training --reduce-dtype bf16 " + kMlpFlags, {"reduce dtype bfloat16", "float32"}});
  c.push_back({"precision: fp16 training without loss scaling", synth, {},
               plan + "--mode training --dtype fp16 --loss-scale none " + kMlpFlags, {"float16", "loss scaling"}});
  c.push_back({"precision: unknown loss scale", synth, {}, plan + "--loss-scale static " + kMlpFlags, {"static"}});
  c.push_back({"device: unknown preset", synth, {}, plan + "--device v100 " + kMlpFlags, {"v100", "h100"}});
  c.push_back({"dtype: unknown", synth, {}, plan + "--dtype fp8 " + kMlpFlags, {"fp8"}});
  c.push_back({"runtime: 16-bit master weights", run, {{"s.json", training_schedule}},
               runs + "--train --dtype bf16 --master-dtype bf16 " + kMlpFlags, {"--master-dtype bf16", "float32"}});
  return c;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

TEST_CASE("catalogue_EveryBadInputExitsTwoWithOneLineAndNoOutput") {
  const auto cases = catalogue();
  CHECK(cases.size() >= 40);
  const auto in = scratch_dir("catalogue_in"), out = scratch_dir("catalogue_out");
  const std::string mpirun = std::string("timeout 120 ") + SHARDSYNTH_MPIEXEC + " --allow-run-as-root --oversubscribe -q -np 1 ";
  for (const BadInput& bad : cases) {
    CAPTURE(bad.name);
    std::filesystem::remove_all(in);
    std::filesystem::create_directories(in);
    for (const auto& [name, content] : bad.files) {
      std::filesystem::create_directories((in / name).parent_path());
      std::ofstream(in / name, std::ios::binary) << content;
    }
    const std::string args = replace_all(replace_all(bad.args, "IN/", in.string() + "/"), "OUT/", out.string() + "/");
    const std::string command =
        bad.tool == Tool::synth ? "timeout 120 " + std::string(SHARDSYNTH_SYNTH_BIN) + " " + args
                                : mpirun + SHARDSYNTH_SHARD_RUN_BIN + " " + args;
    CAPTURE(command);
    const auto r = run_command(command);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.err) == 1);
    for (const std::string& needle : bad.needles) {
      CAPTURE(needle);
      CHECK(r.err.find(replace_all(replace_all(needle, "IN/", in.string() + "/"), "OUT/", out.string() + "/")) !=
            std::string::npos);
    }
    CHECK(std::filesystem::is_empty(out));
    std::filesystem::remove_all(out);
    std::filesystem::create_directories(out);
  }
  std::filesystem::remove_all(in);
  std::filesystem::remove_all(out);
}
