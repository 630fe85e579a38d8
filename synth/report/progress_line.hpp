#pragma once
// A one-line progress display for long searches: "step 12, best 131072,
// bound 131072" redrawn in place with '\r' on stderr. It draws only when
// stderr is a terminal and the run is not --quiet, so logs and pipes stay clean.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "synth/solver/solver_types.hpp"

namespace shardsynth::synth {

// The text of the line after `iteration` (best: the best cost so far, if any).
std::string progress_text(const Iteration& iteration, std::optional<int64_t> best);

class ProgressLine {
 public:
  // Draws on `stream` when `enabled`.
  ProgressLine(std::FILE* stream, bool enabled);
  // Enabled when stderr is a terminal (isatty) and not quiet.
  static ProgressLine for_stderr(bool quiet);
  // Records a step and redraws the line.
  void update(const Iteration& iteration);
  // Erases the line (before other output, and at the end).
  void clear();
  bool enabled() const { return enabled_; }

 private:
  std::FILE* stream_;            // where the line is drawn
  bool enabled_;                 // whether anything is drawn
  bool drawn_ = false;           // whether a line is on screen now
  std::optional<int64_t> best_;  // the best sat cost so far
};

}  // namespace shardsynth::synth
