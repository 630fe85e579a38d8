#pragma once
// What one rank holds while it runs a plan, held to the plan's memory
// ledger (the schedule's memory "tensors": synth/memory_ledger.hpp).
//
// The executor tells the ledger each time step as it starts (synth/
// liveness.hpp's numbering: forward of graph node i at step i of the
// topological order; in training its backward at 2N-1-i and the optimizer
// at 2N). Like a static memory plan, a planned tensor's buffer is reserved
// when its interval starts (counted at its local shard's bytes under the
// run's specs until its op fills it), and freed, through the release the
// executor gave, when the interval ends; a tensor still held after the last
// step stays (the run's results). Holding or reading a planned tensor outside
// its interval throws a one-line error naming the tensor and the step.
//
// At the end of each step it records the planned bytes held by category
// (from the real shards: elements held times their element size; a
// parameter's planned gathered copy, "node.param:gathered", is category
// transient) and the transient bytes the executor reported (gathered
// parameters the plan does not list, resharding scratch, activation
// gradients: not in the model, which counts none).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/graph.hpp"
#include "ir/mesh.hpp"
#include "ir/schedule.hpp"

namespace shardsynth::runtime {

struct PlanSpecs;

// Planned bytes by category.
struct MemoryBytes {
  int64_t params = 0;       // parameter shards (as stored)
  int64_t grads = 0;        // gradient buffers
  int64_t optimizer = 0;    // optimizer state
  int64_t activations = 0;  // activations
  int64_t transient = 0;    // planned transient tensors (a parameter's gathered copy around its uses)

  int64_t total() const { return params + grads + optimizer + activations + transient; }
  bool operator==(const MemoryBytes&) const = default;
};

// What a rank held, measured.
struct MemoryMeasured {
  int64_t peak_step = 0;          // first time step at which the planned bytes held peaked
  std::string peak_at;            // what ran then: "forward of NODE", "backward of NODE", "optimizer"
  MemoryBytes at_peak;            // planned bytes held at that step, by category
  int64_t transient_at_peak = 0;  // transient bytes at that step (outside the plan)
  int64_t transient_max = 0;      // the most transient bytes at any step
  std::map<std::string, int64_t> transient_kinds;  // transient_at_peak by kind (MemoryLedger::transient's `what`)
  std::vector<MemoryBytes> steps;  // planned bytes held at each time step, by category (this rank's; not gathered)
  std::vector<std::map<std::string, int64_t>> transient_steps;  // per time step: the most transient bytes of each kind
};

// "forward of NODE", "backward of NODE" or "optimizer" per time step of
// `graph`'s topological order (training: with the backward and the optimizer).
std::vector<std::string> step_names(const ir::Graph& graph, bool training);

// Bytes `elements` elements of type `dtype` take as the model counts them
// (int64 ids 8 each, not the fp32 the CPU runtime keeps them in).
int64_t shard_bytes(std::size_t elements, ir::DType dtype);

// Bytes this rank's shard of a planned tensor takes under the run's specs:
// an activation in its node's spec, a parameter in its stored spec (training)
// or its use's, a gradient buffer in its ":grad" spec, Adam's two fp32
// moments in its ":state" spec. Throws std::invalid_argument naming a
// tensor the graph lacks.
int64_t planned_local_bytes(const ir::Graph& graph, const ir::Mesh& mesh, const PlanSpecs& plan,
                            const ir::PlannedTensor& tensor);

class MemoryLedger {
 public:
  using LocalBytes = std::function<int64_t(const ir::PlannedTensor&)>;

  // `planned`: the plan's tensors; `steps`: a name per time step
  // (step_names); `local_bytes`: what a reserved buffer counts.
  MemoryLedger(std::vector<ir::PlannedTensor> planned, std::vector<std::string> steps, LocalBytes local_bytes);

  // Starts time step `step`: records the one before, frees the tensors whose
  // interval ended and reserves those whose interval starts. Steps go up
  // one at a time from 0; starting the current step again does nothing.
  void begin(int64_t step);
  // Records the current step; the run is over.
  void finish();

  bool planned(const std::string& name) const { return index_.count(name) > 0; }
  // The executor now holds planned tensor `name`, `bytes` real bytes;
  // `release` frees it when its interval ends. Unplanned names are ignored.
  void hold(const std::string& name, int64_t bytes, std::function<void()> release = {});
  // Checks that a planned tensor is live now (unplanned names pass).
  void read(const std::string& name) const;
  // The executor now holds `bytes` of transient buffers of kind `what`
  // (until it says otherwise); each step records the highest sum.
  void transient(const std::string& what, int64_t bytes);

  // The measurement so far (complete after finish()).
  const MemoryMeasured& measured() const { return measured_; }
  int64_t step() const { return step_; }

 private:
  struct Entry {
    ir::PlannedTensor tensor;        // as planned
    bool live = false;               // within one of its intervals now
    int64_t bytes = 0;               // bytes counted while live: reserved, then what the executor holds
    std::function<void()> release;   // frees the executor's copy
  };
  bool live_at(const Entry& e, int64_t step) const;
  void record();
  [[noreturn]] void outside(const std::string& name, const char* verb) const;

  std::vector<Entry> entries_;
  std::map<std::string, std::size_t> index_;  // tensor name -> entries_ index
  std::vector<std::string> steps_;            // name of each time step
  LocalBytes local_bytes_;
  int64_t step_ = -1;                         // the current step; -1 before the first
  std::map<std::string, int64_t> transients_; // kind -> bytes held now
  int64_t step_transient_ = 0;                // highest transient sum in the current step
  std::map<std::string, int64_t> step_kinds_; // transients_ when the current step's sum was highest
  std::map<std::string, int64_t> kind_max_;   // the most bytes of each kind held in the current step
  int64_t peak_ = -1;                         // highest planned total recorded
  MemoryMeasured measured_;
};

// The larger of two measurements (the first on a tie), with the most transient of both.
MemoryMeasured larger(const MemoryMeasured& a, const MemoryMeasured& b);

}  // namespace shardsynth::runtime
