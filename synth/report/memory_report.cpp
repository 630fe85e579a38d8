#include "synth/report/memory_report.hpp"

#include <cstdio>

namespace shardsynth::synth {
namespace {

std::string row(const char* what, int64_t bytes, const std::string& note = "") {
  char line[160];
  std::snprintf(line, sizeof line, "%-19s %16lld B %9.2f GB%s\n", what, static_cast<long long>(bytes),
                static_cast<double>(bytes) / 1e9, note.empty() ? "" : ("  " + note).c_str());
  return line;
}

}  // namespace

std::string memory_report_text(const ir::ScheduleMemory& m, const ir::Mesh& mesh, costs::Mode mode,
                               const std::string& precision) {
  const bool training = mode == costs::Mode::training;
  std::string text = "Memory per device (mesh " + ir::mesh_string(mesh) + ", " + costs::mode_name(mode) +
                     "; every device holds the same):\n";
  if (!precision.empty()) text += "precision: " + precision + "\n";
  text += row("parameters", m.params);
  if (training) {
    text += row("gradients", m.grads);
    text += row("optimizer state", m.optimizer, precision.empty() ? "" : "master weights and Adam's two moments");
  }
  text += row(training ? "saved activations" : "live activations", m.activations, "at the peak");
  text += row("transient buffers", m.transient,
              training ? "at the peak: gathered parameter copies (collective scratch not modelled)"
                       : "collective scratch, not modelled");
  text += row("peak", m.peak, "time step " + std::to_string(m.peak_step) + ", " + m.peak_at);
  if (m.zero_stages.size() == 4) {
    text += "parameter elements stored as used " + std::to_string(m.zero_stages[0]) + ", with ZeRO-1 (state sharded) " +
            std::to_string(m.zero_stages[1]) + ", ZeRO-2 (gradient too) " + std::to_string(m.zero_stages[2]) +
            ", ZeRO-3/FSDP (all sharded, gathered at use) " + std::to_string(m.zero_stages[3]) + "\n";
  }
  if (training) {
    text += m.recomputed_ops == 0
                ? std::string("recomputation: none (every activation is saved for the backward)\n")
                : "recomputation: " + std::to_string(m.recomputed_ops) + " op outputs (" + std::to_string(m.recomputed) +
                      " B per device) are dropped after the forward and recomputed for the backward\n";
  }
  return text;
}

}  // namespace shardsynth::synth
