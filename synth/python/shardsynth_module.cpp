// The engine of the Python package `shardsynth` (its module `_native`), for Python schedulers such as
// Slapo. JSON values cross the boundary through Python's json module, so
// dicts come back exactly as the JSON formats document them.
//
//   import shardsynth
//   plan = shardsynth.solve(shardsynth.builtin_graph("mlp"), mesh="8", cost_model="slapo")
//   print(plan["directives"], plan["cost"], plan["trace"][-1]["status"])
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "costs/collective.hpp"
#include "costs/cost_model.hpp"
#include "costs/op_cost.hpp"
#include "ir/error.hpp"
#include "ir/gpt2.hpp"
#include "ir/graph_json.hpp"
#include "ir/mesh.hpp"
#include "ir/models.hpp"
#include "ir/schedule.hpp"
#include "synth/collective_ledger.hpp"
#include "synth/pins.hpp"
#include "synth/plans.hpp"
#include "synth/report/trace_jsonl.hpp"
#include "synth/synthesizer.hpp"

namespace py = pybind11;
using namespace shardsynth;

namespace {

py::object to_python(const nlohmann::json& value) { return py::module_::import("json").attr("loads")(value.dump()); }

// A graph given as JSON text or as the parsed dict/list.
nlohmann::json from_python(const py::object& value) {
  const std::string text =
      py::isinstance<py::str>(value) ? value.cast<std::string>() : py::module_::import("json").attr("dumps")(value).cast<std::string>();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw ir::InputError("graph_json: not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
}

py::dict solve(const py::object& graph_json, const std::string& mesh_text, const std::string& cost_model,
               const std::optional<std::string>& mode, const std::optional<int64_t>& memory, const std::vector<std::string>& pins,
               const std::string& unknown_ops, const std::optional<double>& time_limit, const std::string& plan,
               uint64_t seed) {
  try {
    std::vector<std::string> warnings;
    const ir::Graph graph =
        ir::graph_from_json(from_python(graph_json), "graph_json", {ir::parse_unknown_ops(unknown_ops), &warnings});
    const ir::Mesh mesh = ir::parse_mesh(mesh_text);
    const auto model = costs::make_cost_model(cost_model);
    synth::SynthOptions options;
    if (mode) options.lower.mode = costs::parse_mode(*mode);
    if (memory) {
      if (*memory <= 0) throw ir::InputError("memory " + std::to_string(*memory) + " is not a positive number of bytes");
      options.lower.memory_budget = *memory;
    }
    if (time_limit) {
      if (!(*time_limit > 0)) throw ir::InputError("time_limit " + std::to_string(*time_limit) + " is not a positive number of seconds");
      options.cegis.time_limit_s = *time_limit;
    }
    for (const auto& text : pins) options.pins.push_back(synth::parse_pin(text));
    const bool random = plan == synth::kRandomPlan;
    if (!plan.empty() && !random) options.lower.allow = synth::plan_filter(plan, graph, mesh);
    nlohmann::json trace = nlohmann::json::array();
    synth::SynthResult result;
    {
      py::gil_scoped_release release;
      if (random) {
        result = synth::random_plan(graph, mesh, *model, options, seed);
      } else {
        result = synth::synthesize(graph, mesh, *model, options, [&](const synth::Lowered& lowered, const synth::Iteration& it) {
          trace.push_back(synth::iteration_to_json(lowered, it));
        });
      }
    }
    py::dict out;
    out["directives"] = ir::directives_text(result.schedule);
    out["schedule"] = to_python(ir::to_json(result.schedule));
    out["cost"] = result.search.best_cost;
    out["unit"] = model->unit();
    out["proven_optimal"] = result.search.proven_optimal;
    out["lower_bound"] = result.search.lower_bound;
    out["stop_reason"] = result.search.stop_reason;
    out["trace"] = to_python(trace);
    out["warnings"] = warnings;
    return out;
  } catch (const ir::InputError& e) {
    throw py::value_error(e.what());
  }
}

py::list ledger_to_python(const std::vector<synth::PricedCollective>& rows) {
  py::list out;
  for (const auto& row : rows) {
    py::dict d;
    d["kind"] = costs::collective_name(row.step.kind);
    d["phase"] = synth::phase_name(row.phase);
    d["axis"] = row.step.mesh_axis;
    d["bytes"] = row.bytes;
    d["elements"] = row.elements;
    d["cost"] = row.cost;
    d["tensor"] = row.tensor;
    d["move"] = row.move;
    out.append(d);
  }
  return out;
}

// The collectives a schedule prices (synth/collective_ledger.hpp), for its own mesh and mode.
py::dict collectives(const py::object& graph_json, const py::object& schedule_json, const std::string& cost_model,
                     const std::string& unknown_ops) {
  try {
    const ir::Graph graph = ir::graph_from_json(from_python(graph_json), "graph_json", {ir::parse_unknown_ops(unknown_ops), nullptr});
    const ir::Schedule schedule = ir::schedule_from_json(from_python(schedule_json), "schedule");
    std::string mesh_text;
    for (int n : schedule.mesh) mesh_text += (mesh_text.empty() ? "" : "x") + std::to_string(n);
    const ir::Mesh mesh = ir::parse_mesh(mesh_text);
    const auto model = costs::make_cost_model(cost_model);
    synth::SynthOptions options;
    options.lower.mode = costs::parse_mode(schedule.mode);
    synth::SynthResult result;
    {
      py::gil_scoped_release release;
      result = synth::evaluate_schedule(graph, mesh, *model, options, schedule);
    }
    py::dict out;
    out["collectives"] = ledger_to_python(synth::plan_collectives(result.lowered, result.search.best, *model));
    out["cost"] = result.search.best_cost;
    out["mode"] = schedule.mode;
    return out;
  } catch (const ir::InputError& e) {
    throw py::value_error(e.what());
  }
}

// costs::plan_resharding's steps from spec `from` to spec `to` (same described dims) on `mesh`, each
// with the spec after it: what a run that moves a tensor as synth prices it executes.
py::list reshard_steps(const std::string& from, const std::string& to, const std::string& mesh_text) {
  try {
    const ir::Mesh mesh = ir::parse_mesh(mesh_text);
    const int rank = mesh.rank();
    ir::Spec spec = ir::parse_spec(from, rank);
    const ir::Spec target = ir::parse_spec(to, rank);
    if (spec.rank() != target.rank()) throw ir::InputError("specs '" + from + "' and '" + to + "' describe different dims");
    const auto steps = costs::plan_resharding(spec, target, mesh);
    if (!steps) throw ir::InputError("spec '" + to + "' cannot be reached from '" + from + "'");
    py::list out;
    for (const costs::Collective& step : *steps) {
      spec = costs::apply(step, spec);
      py::dict row;
      row["kind"] = costs::collective_name(step.kind);
      row["axis"] = step.mesh_axis;
      row["src_dim"] = step.src_dim;
      row["dst_dim"] = step.dst_dim;
      row["dst_blocks"] = step.dst_blocks;
      row["after"] = ir::to_string(spec, rank);
      out.append(row);
    }
    return out;
  } catch (const ir::InputError& e) {
    throw py::value_error(e.what());
  }
}

py::object builtin_graph(const std::string& name, const std::optional<int64_t>& layers, bool loss_head) {
  try {
    if (name == "mlp") {
      if (layers) throw ir::InputError("layers " + std::to_string(*layers) + ": the mlp has a fixed two layers");
      if (loss_head) throw ir::InputError("loss_head needs a language model (gpt2), not mlp");
      return to_python(ir::graph_to_json(ir::build_mlp({})));
    }
    if (name == "gpt2") {
      ir::Gpt2Config config = ir::gpt2_preset("small");
      if (layers) {
        if (*layers <= 0) throw ir::InputError("layers " + std::to_string(*layers) + " is not a positive count");
        config.n_layer = *layers;
      }
      config.loss_head = loss_head;
      return to_python(ir::graph_to_json(ir::build_gpt2(config)));
    }
    throw ir::InputError("unknown built-in graph '" + name + "' (known: mlp, gpt2)");
  } catch (const ir::InputError& e) {
    throw py::value_error(e.what());
  }
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "shardsynth: provably optimal tensor shardings (R/S specs) for a model on a device mesh";
  m.def("solve", &solve, py::arg("graph_json"), py::arg("mesh") = "8", py::arg("cost_model") = "alpha-beta",
        py::arg("mode") = py::none(), py::arg("memory") = py::none(), py::arg("pins") = std::vector<std::string>{},
        py::arg("unknown_ops") = "error", py::arg("time_limit") = py::none(), py::arg("plan") = "",
        py::arg("seed") = 1,
        "Finds the cheapest sharding of a graph (graph JSON as str or dict) and proves it optimal.\n"
        "plan: '' (any), a plan family as `synth --plan` takes ('megatron', 'fsdp', 'zero1', ...), or 'random'\n"
        "(one seeded random legal plan, `seed`, not searched).\n"
        "Returns a dict: directives (text), schedule (dict), cost, unit, proven_optimal, lower_bound,\n"
        "stop_reason, trace (one dict per search step, docs/trace_jsonl.md) and warnings.\n"
        "Bad input raises ValueError.");
  m.def("collectives", &collectives, py::arg("graph_json"), py::arg("schedule"), py::arg("cost_model") = "alpha-beta",
        py::arg("unknown_ops") = "error",
        "The collectives a schedule (dict or JSON text, for this graph) prices, on its own mesh and in its own mode,\n"
        "read off the pricing (synth/collective_ledger.hpp). Returns a dict: collectives, one step's list of {kind,\n"
        "axis, phase (forward, backward, optimizer), bytes (one device sends, ring volumes), elements (its local\n"
        "buffer), cost (its price), tensor, move (FROM->TO, spec text)}; cost (the schedule's, re-scored) and mode.\n"
        "Bad input raises ValueError.");
  m.def("reshard_steps", &reshard_steps, py::arg("from_spec"), py::arg("to_spec"), py::arg("mesh"),
        "The steps (costs::plan_resharding) that move a tensor from one spec to another (spec text, the same\n"
        "described dims) on a mesh ('2x4'): a list of {kind (slice, all_gather, all_to_all, all_reduce,\n"
        "reduce_scatter), axis, src_dim, dst_dim (described dims, -1: none), dst_blocks, after (spec text)}.\n"
        "Bad input raises ValueError.");
  m.def("builtin_graph", &builtin_graph, py::arg("name"), py::arg("layers") = py::none(), py::arg("loss_head") = false,
        "The graph JSON (dict) of a built-in model: 'mlp', or 'gpt2' (small preset; layers = blocks).\n"
        "loss_head: gpt2 ends in its cross-entropy loss against a labels input, as `synth --mode training` builds it\n"
        "(pass it for a training graph; without it the graph ends in the logits).");
}
