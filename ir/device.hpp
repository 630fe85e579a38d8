#pragma once
// Device presets: a device's dense peak throughput per element type, from
// the vendor's datasheet, for pricing compute at the dtype an op runs in
// (`--device h100`). Presets set peaks only; links and memory keep the
// mesh's values.
#include <string>
#include <string_view>
#include <vector>

#include "ir/mesh.hpp"

namespace shardsynth::ir {

// Sets every device of `mesh` to preset `name`: peak_tflops becomes the
// preset's fp32 figure and dtype_peak_tflops its per-dtype figures. Throws
// InputError naming an unknown preset.
void apply_device(Mesh& mesh, std::string_view name);
// Known presets, as `--device` takes them.
std::vector<std::string> device_names();

}  // namespace shardsynth::ir
