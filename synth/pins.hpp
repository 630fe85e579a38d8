#pragma once
// User pins: fix a tensor's spec, or forbid one, before the search.
//
//   --pin fc1.weight=SR      the parameter must be sharded on its dim 0
//   --forbid output=SR       the graph output may not stay sharded
//
// A pin names a tensor as the schedule's `specs` do (a node's output by the
// node name, a parameter as "node.param") and a spec in spec text. Pins are
// applied to the lowered problem by forbidding every strategy of the owning
// problem node that disagrees, so the optimum found respects them. Before
// that, one Z3 check with an assumption literal per pin tells whether the
// pins can hold together; when they cannot, the unsat core over those
// literals, shrunk until every pin in it is needed, names the conflict
// (ResolvedPin and conflicting_pins: synth/solver/pin_conflict.hpp).
#include <string>
#include <string_view>
#include <vector>

#include "ir/error.hpp"
#include "synth/lowering.hpp"
#include "synth/solver/pin_conflict.hpp"

namespace shardsynth::synth {

enum class PinKind {
  fix,     // the tensor takes exactly this spec
  forbid,  // the tensor takes any spec but this one
};

struct Pin {
  std::string tensor;            // node name (its output) or "node.param", as in ir::Schedule::specs
  std::string spec;              // spec text ("SR", "RR+P", "S0R" on 2-D meshes)
  PinKind kind = PinKind::fix;   // fix or forbid

  bool operator==(const Pin&) const = default;
};

// "fc1=SR" (fix) or "fc1!=SR" (forbid). Throws ir::InputError on other text.
Pin parse_pin(std::string_view text);
// The pin as parse_pin reads it.
std::string to_string(const Pin& pin);

// Finds each pin's problem node and the strategies agreeing with it (a
// ResolvedPin, synth/solver/pin_conflict.hpp). Throws ir::InputError naming
// the pin when its tensor is not in the graph or its spec does not parse for
// the mesh.
std::vector<ResolvedPin> resolve_pins(const Lowered& lowered, const std::vector<Pin>& pins);

// Thrown when the pins cannot hold together (or with the problem's own
// forbidden choices and memory limit): a user error, so an InputError.
class PinConflictError : public ir::InputError {
 public:
  PinConflictError(const std::string& message, std::vector<Pin> conflict)
      : ir::InputError(message), conflict_(std::move(conflict)) {}
  const std::vector<Pin>& conflict() const { return conflict_; }  // the pins that cannot hold together

 private:
  std::vector<Pin> conflict_;
};

// Resolves the pins, checks them (throwing PinConflictError naming the
// conflicting pins) and forbids, in the lowered problem, every strategy that
// disagrees with one.
void apply_pins(Lowered& lowered, const std::vector<Pin>& pins);

}  // namespace shardsynth::synth
