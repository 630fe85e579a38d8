#include "synth/report/progress_line.hpp"

#include <unistd.h>

namespace shardsynth::synth {

std::string progress_text(const Iteration& it, std::optional<int64_t> best) {
  std::string text = "synth: step " + std::to_string(it.index) + ", best " + (best ? std::to_string(*best) : "-") + ", bound " +
                     (it.bound ? std::to_string(*it.bound) : "-");
  if (it.status != CheckStatus::sat) text += it.status == CheckStatus::unsat ? " (unsat)" : " (unknown)";
  return text;
}

ProgressLine::ProgressLine(std::FILE* stream, bool enabled) : stream_(stream), enabled_(enabled) {}

ProgressLine ProgressLine::for_stderr(bool quiet) { return ProgressLine(stderr, !quiet && ::isatty(STDERR_FILENO) == 1); }

void ProgressLine::update(const Iteration& it) {
  if (it.status == CheckStatus::sat && !it.relaxed && (!best_ || it.cost < *best_)) best_ = it.cost;
  if (!enabled_) return;
  std::fputs(("\r\x1b[K" + progress_text(it, best_)).c_str(), stream_);
  std::fflush(stream_);
  drawn_ = true;
}

void ProgressLine::clear() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\x1b[K", stream_);
  std::fflush(stream_);
  drawn_ = false;
}

}  // namespace shardsynth::synth
