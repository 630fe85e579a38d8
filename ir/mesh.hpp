#pragma once
// The device mesh: a 1-D (`8`) or 2-D (`2x4`) grid of devices, with the link
// parameters of each axis.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardsynth::ir {

struct Mesh {
  std::vector<int64_t> shape;          // devices along each mesh axis, axis 0 first
  std::vector<double> bandwidth_gbps;  // per axis: link bandwidth in GB/s (alpha-beta cost models)
  std::vector<double> latency_us;      // per axis: per-message latency in microseconds

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t num_devices() const;
};

// Parses "8" or "2x4". Every extent must be at least 1 and the device count
// at most 65536; throws InputError naming the text otherwise. Bandwidth and
// latency get the documented defaults of one NVLink node (300 GB/s, 1 us).
Mesh parse_mesh(std::string_view text);
// "8", "2x4".
std::string mesh_string(const Mesh& mesh);

}  // namespace shardsynth::ir
