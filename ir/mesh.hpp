#pragma once
// The device mesh: a 1-D (`8`) or 2-D (`2x4`) grid of devices, with the link
// parameters of each axis.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.hpp"

namespace shardsynth::ir {

// Defaults (documented in README.md):
//  - a 1-D mesh is one 8-GPU NVLink node: 200 GB/s and 1 us per ring step;
//  - a 2-D mesh AxB is A nodes of B GPUs: axis 0 crosses nodes (InfiniBand,
//    25 GB/s per GPU, 5 us per step), axis 1 stays inside a node (NVLink);
//  - every device: 312 dense TFLOP/s (A100 bf16) for every dtype and 80 GiB
//    of memory; a device preset (ir/device.hpp) gives a peak per dtype.
struct Mesh {
  std::vector<int64_t> shape;          // devices along each mesh axis, axis 0 first
  std::vector<double> bandwidth_gbps;  // per axis: bus bandwidth of one device's link, GB/s (= bytes per ns)
  std::vector<double> latency_us;      // per axis: latency of one ring step, microseconds
  double peak_tflops = 312;            // per device: peak throughput of a dtype missing below, 10^12 flop/s
  std::map<DType, double> dtype_peak_tflops;  // per device and element type: peak throughput, 10^12 flop/s
  int64_t memory_bytes = int64_t{80} << 30;  // per device: memory, bytes

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t num_devices() const;
};

// Parses "8" or "2x4". Every extent must be at least 1 and the device count
// at most 65536; throws InputError naming the text otherwise. Links get the
// defaults above.
Mesh parse_mesh(std::string_view text);
// Overrides per-axis link parameters from comma lists ("25,200"); an empty
// text keeps the defaults. Throws InputError naming a value that is not a
// positive finite number or a list of the wrong length.
void set_links(Mesh& mesh, std::string_view bandwidth_gbps, std::string_view latency_us);
// Reads a mesh from JSON: {"shape": [2, 4], "bandwidth_gbps": [25, 200],
// "latency_us": [5, 1], "peak_tflops": 312, "memory_bytes": 85899345920,
// "dtype_peak_tflops": {"bfloat16": 989, "float32": 67}}; every field but
// "shape" is optional. `where` names the source in errors.
Mesh mesh_from_json(const std::string& text, const std::string& where);
// "8", "2x4".
std::string mesh_string(const Mesh& mesh);
// Peak throughput of one device computing in `dtype`, 10^12 flop/s: its
// entry in dtype_peak_tflops, else peak_tflops.
double peak_tflops(const Mesh& mesh, DType dtype);

}  // namespace shardsynth::ir
