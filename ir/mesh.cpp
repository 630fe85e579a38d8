#include "ir/mesh.hpp"

#include <charconv>

#include "ir/error.hpp"

namespace shardsynth::ir {
namespace {
constexpr int64_t kMaxDevices = 65536;
constexpr double kDefaultBandwidthGbps = 300.0;
constexpr double kDefaultLatencyUs = 1.0;
}  // namespace

int64_t Mesh::num_devices() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

Mesh parse_mesh(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  Mesh mesh;
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find('x', start);
    std::string_view part = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    int64_t extent = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), extent);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) {
      throw InputError("bad mesh " + quoted + ": expected extents like 8 or 2x4");
    }
    if (extent < 1 || extent > kMaxDevices) {
      throw InputError("bad mesh " + quoted + ": extent " + std::to_string(extent) + " is outside [1, " +
                       std::to_string(kMaxDevices) + "]");
    }
    mesh.shape.push_back(extent);
    if (mesh.num_devices() > kMaxDevices) {
      throw InputError("bad mesh " + quoted + ": more than " + std::to_string(kMaxDevices) + " devices");
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (mesh.rank() > 2) throw InputError("bad mesh " + quoted + ": only 1-D and 2-D meshes are supported");
  mesh.bandwidth_gbps.assign(mesh.shape.size(), kDefaultBandwidthGbps);
  mesh.latency_us.assign(mesh.shape.size(), kDefaultLatencyUs);
  return mesh;
}

std::string mesh_string(const Mesh& mesh) {
  std::string text;
  for (std::size_t i = 0; i < mesh.shape.size(); ++i) {
    if (i > 0) text += "x";
    text += std::to_string(mesh.shape[i]);
  }
  return text;
}

}  // namespace shardsynth::ir
