#pragma once
// A small scheduling DSL in Slapo's style, built on the installed shardsynth
// library:
//
//   dsl::Schedule sch(graph, mesh);
//   sch["fc1"].shard("weight", 0);                 // the user's own decision
//   auto plan = synthesize(..., pins = sch.pins()) // shardsynth completes it, optimally
//   sch.fill_from(plan.schedule);                  // the plan's directives, through the same API
//   run(sch.to_ir(plan.schedule));                 // and the runtime executes it
//
// Every call names a module of the graph (sch["name"]); a name the graph
// lacks, a parameter the module lacks or a dim out of range throws
// std::invalid_argument naming it.
#include <map>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"
#include "synth/pins.hpp"

namespace dsl {

class Schedule;

// sch["fc1"]: the directives of one module.
class ModuleSchedule {
 public:
  ModuleSchedule(Schedule& owner, const shardsynth::ir::Node& node) : owner_(owner), node_(node) {}

  // sch["fc1"].shard("weight", 0): shard parameter `param` on dim `dim` (of
  // its stored layout) over every device of a 1-D mesh.
  ModuleSchedule& shard(const std::string& param, int dim);
  // sch["fc1"].sync("fwd_pre", "RR->SR"): reshard an input before the module
  // runs (fwd_pre; `arg` picks the input of a module with several) or its
  // output after it (fwd_post).
  ModuleSchedule& sync(const std::string& mode, const std::string& sync_op_or_fn, int arg = -1);

 private:
  Schedule& owner_;                     // the schedule recording the directives
  const shardsynth::ir::Node& node_;    // the module's graph node
};

class Schedule {
 public:
  Schedule(const shardsynth::ir::Graph& graph, shardsynth::ir::Mesh mesh);

  // The module named `name`; throws std::invalid_argument when the graph has none.
  ModuleSchedule& operator[](const std::string& name);

  // Every directive recorded, in call order.
  const std::vector<shardsynth::ir::Directive>& directives() const { return directives_; }
  // Which directives the user wrote before fill_from (the rest came from the plan).
  const std::vector<bool>& written_by_user() const { return by_user_; }
  // The shard() calls made so far, as pins for the synthesizer (1-D meshes).
  std::vector<shardsynth::synth::Pin> pins() const;

  // Replays a synthesized plan through operator[], shard() and sync(),
  // skipping the directives already recorded.
  void fill_from(const shardsynth::ir::Schedule& plan);
  // The recorded program as Slapo's Python.
  std::string to_python() const;
  // The runtime's schedule: the recorded directives in the plan's order, with
  // the plan's tensor specs. Throws std::invalid_argument when the recorded
  // directives are not exactly the plan's.
  shardsynth::ir::Schedule to_ir(const shardsynth::ir::Schedule& plan) const;

  void record(shardsynth::ir::Directive directive);  // used by ModuleSchedule

 private:
  const shardsynth::ir::Graph& graph_;             // the model
  shardsynth::ir::Mesh mesh_;                      // the devices
  std::map<std::string, ModuleSchedule> modules_;  // sch["name"] handles, made on first use
  std::vector<shardsynth::ir::Directive> directives_;  // recorded, in call order
  std::vector<bool> by_user_;                      // parallel to directives_: recorded before fill_from
  bool filling_ = false;                           // inside fill_from
};

}  // namespace dsl
