#include "synth/report/graphviz.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "ir/spec.hpp"
#include "synth/solver/problem.hpp"

extern char** environ;

namespace shardsynth::synth {

namespace {

// Fill colors from Graphviz's pastel19/set312 schemes, named so the output needs no scheme.
const std::vector<std::string> kPalette = {"#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4", "#fed9a6", "#ffffcc",
                                           "#e5d8bd", "#fddaec", "#8dd3c7", "#bebada", "#fb8072", "#80b1d3"};

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string quoted(const std::string& text) { return "\"" + escaped(text) + "\""; }

// A multi-line label: each line escaped, joined by DOT's centered line break.
std::string lines(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) out += (out.empty() ? "" : "\\n") + escaped(part);
  return "\"" + out + "\"";
}

}  // namespace

std::string plan_dot(const Lowered& lowered, const Assignment& a) {
  const int mesh_rank = lowered.mesh.rank();
  const auto& graph = lowered.graph;
  std::set<std::string> spec_texts;
  for (ir::Vertex v : lowered.order) spec_texts.insert(ir::to_string(output_spec(lowered, a, v), mesh_rank));
  std::map<std::string, std::string> color;
  for (const auto& spec : spec_texts) color[spec] = kPalette[color.size() % kPalette.size()];

  // The problem edge (and the consumer's use spec) of each graph edge that has one.
  std::map<std::tuple<ir::Vertex, ir::Vertex, int>, int> problem_edge;
  for (std::size_t e = 0; e < lowered.edges.size(); ++e) {
    const EdgeLabel& label = lowered.edges[e];
    problem_edge[{label.producer, label.consumer, label.operand}] = static_cast<int>(e);
  }

  std::ostringstream out;
  out << "digraph shardsynth {\n"
      << "  rankdir=TB;\n"
      << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  for (ir::Vertex v : lowered.order) {
    const ir::Node& node = graph.node(v);
    const std::string spec = ir::to_string(output_spec(lowered, a, v), mesh_rank);
    out << "  " << quoted(node.name) << " [label=" << lines({node.name, node.kind, spec})
        << ", fillcolor=" << quoted(color[spec]) << "];\n";
  }
  for (ir::Vertex v : lowered.order) {
    const auto inputs = graph.inputs_of(v);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const ir::Vertex u = inputs[i];
      const std::string from = ir::to_string(output_spec(lowered, a, u), mesh_rank);
      std::string to = ir::to_string(output_spec(lowered, a, v), mesh_rank);
      int64_t cost = 0;
      const auto found = problem_edge.find({u, v, static_cast<int>(i)});
      if (found != problem_edge.end()) {
        const int consumer = lowered.owner[v];
        to = ir::to_string(lowered.nodes[consumer].strategies[a[consumer]].operands[i], mesh_rank);
        cost = edge_cost(lowered.problem, lowered.problem.edges[found->second], a);
      }
      const bool reshard = from != to;
      out << "  " << quoted(graph.node(u).name) << " -> " << quoted(graph.node(v).name)
          << " [label=" << lines({reshard ? from + "->" + to : from, "cost " + std::to_string(cost)})
          << ", color=" << quoted(reshard || cost > 0 ? "firebrick" : "gray40") << "];\n";
    }
  }
  out << "  subgraph cluster_legend {\n    label=\"specs\";\n";
  int k = 0;
  for (const auto& [spec, fill] : color) {
    out << "    " << quoted("legend " + std::to_string(k++)) << " [label=" << quoted(spec) << ", fillcolor=" << quoted(fill)
        << "];\n";
  }
  out << "  }\n}\n";
  return out.str();
}

std::optional<std::string> find_dot_binary() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/dot";
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string render_svg(const std::string& dot_path, const std::string& dot_text) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("shardsynth_dot_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string in = (dir / "plan.dot").string(), out = (dir / "plan.svg").string();
  std::ofstream(in, std::ios::binary) << dot_text;
  std::vector<std::string> args = {dot_path, "-Tsvg", in, "-o", out};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int status = -1;
  const int spawned = ::posix_spawn(&pid, dot_path.c_str(), nullptr, nullptr, argv.data(), environ);
  if (spawned == 0) ::waitpid(pid, &status, 0);
  std::ifstream result(out, std::ios::binary);
  std::ostringstream svg;
  svg << result.rdbuf();
  fs::remove_all(dir);
  if (spawned != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(dot_path + " -Tsvg failed (status " + std::to_string(spawned != 0 ? spawned : status) + ")");
  }
  return svg.str();
}

std::string beside_svg(const std::string& graph_svg_path, const std::string& kind) {
  const std::string suffix = ".svg";
  const bool ends_in_svg = graph_svg_path.size() > suffix.size() &&
                           graph_svg_path.compare(graph_svg_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string stem = ends_in_svg ? graph_svg_path.substr(0, graph_svg_path.size() - suffix.size()) : graph_svg_path;
  return stem + "." + kind + suffix;
}

}  // namespace shardsynth::synth
