#include "ir/mesh.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "ir/error.hpp"
#include "ir/json_field.hpp"

namespace shardsynth::ir {
namespace {
constexpr int64_t kMaxDevices = 65536;
constexpr double kNodeBandwidthGbps = 200.0;   // NVLink, per GPU
constexpr double kNodeLatencyUs = 1.0;
constexpr double kNetworkBandwidthGbps = 25.0;  // 200 Gb/s InfiniBand, per GPU
constexpr double kNetworkLatencyUs = 5.0;

void default_links(Mesh& mesh) {
  mesh.bandwidth_gbps.assign(mesh.shape.size(), kNodeBandwidthGbps);
  mesh.latency_us.assign(mesh.shape.size(), kNodeLatencyUs);
  if (mesh.rank() == 2) {
    mesh.bandwidth_gbps[0] = kNetworkBandwidthGbps;
    mesh.latency_us[0] = kNetworkLatencyUs;
  }
}

std::vector<double> parse_list(std::string_view text, const char* what, std::size_t want) {
  std::vector<double> values;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    std::string part(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    char* stop = nullptr;
    const double value = std::strtod(part.c_str(), &stop);
    if (part.empty() || stop != part.c_str() + part.size() || !std::isfinite(value) || value <= 0) {
      throw InputError(std::string("bad ") + what + " '" + part + "': expected a positive number");
    }
    values.push_back(value);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (values.size() != want) {
    throw InputError(std::string("bad ") + what + " '" + std::string(text) + "': expected " + std::to_string(want) +
                     " values, one per mesh axis");
  }
  return values;
}
// "dtype_peak_tflops": {"bfloat16": 989, ...} as a map; `where` names the source in errors.
std::map<DType, double> read_dtype_peaks(const nlohmann::json& v, const std::string& where) {
  auto fail = [&](const std::string& why) { return InputError(where + ": field 'dtype_peak_tflops' " + why); };
  if (!v.is_object()) throw fail("must map dtypes to numbers");
  std::map<DType, double> peaks;
  for (auto it = v.begin(); it != v.end(); ++it) {
    DType dtype{};
    try {
      dtype = parse_dtype(it.key());
    } catch (const InputError&) {
      throw fail("names an unknown dtype '" + it.key() + "'");
    }
    const nlohmann::json& peak = it.value();
    if (!peak.is_number() || !(peak.get<double>() > 0) || !std::isfinite(peak.get<double>())) {
      throw fail("must hold positive numbers");
    }
    peaks[dtype] = peak.get<double>();
  }
  return peaks;
}

}  // namespace

double peak_tflops(const Mesh& mesh, DType dtype) {
  const auto it = mesh.dtype_peak_tflops.find(dtype);
  return it == mesh.dtype_peak_tflops.end() ? mesh.peak_tflops : it->second;
}

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
  default_links(mesh);
  return mesh;
}

void set_links(Mesh& mesh, std::string_view bandwidth_gbps, std::string_view latency_us) {
  if (!bandwidth_gbps.empty()) mesh.bandwidth_gbps = parse_list(bandwidth_gbps, "bandwidth", mesh.shape.size());
  if (!latency_us.empty()) mesh.latency_us = parse_list(latency_us, "latency", mesh.shape.size());
}

Mesh mesh_from_json(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON (" + json_parse_failure(e) + ")");
  }
  auto fail = [&](const std::string& field, const std::string& why) {
    return InputError(where + ": field '" + field + "' " + why);
  };
  if (!j.is_object() || !j.contains("shape")) throw fail("shape", "is missing");
  if (!j["shape"].is_array() || j["shape"].empty()) throw fail("shape", "must be a list of extents");
  std::string shape_text;
  for (const auto& extent : j["shape"]) {
    if (!extent.is_number_integer()) throw fail("shape", "must hold integers");
    shape_text += (shape_text.empty() ? "" : "x") + std::to_string(extent.get<int64_t>());
  }
  Mesh mesh = parse_mesh(shape_text);
  auto list = [&](const char* field, std::vector<double>& out) {
    if (!j.contains(field)) return;
    const auto& v = j[field];
    if (!v.is_array() || v.size() != mesh.shape.size()) throw fail(field, "must list one number per mesh axis");
    std::vector<double> values;
    for (const auto& x : v) {
      if (!x.is_number() || !(x.get<double>() > 0) || !std::isfinite(x.get<double>())) throw fail(field, "must hold positive numbers");
      values.push_back(x.get<double>());
    }
    out = values;
  };
  list("bandwidth_gbps", mesh.bandwidth_gbps);
  list("latency_us", mesh.latency_us);
  if (j.contains("peak_tflops")) {
    const auto& v = j["peak_tflops"];
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) throw fail("peak_tflops", "must be a positive number");
    mesh.peak_tflops = v.get<double>();
  }
  if (j.contains("dtype_peak_tflops")) mesh.dtype_peak_tflops = read_dtype_peaks(j["dtype_peak_tflops"], where);
  if (j.contains("memory_bytes")) {
    const auto& v = j["memory_bytes"];
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) throw fail("memory_bytes", "must be a positive integer");
    mesh.memory_bytes = v.get<int64_t>();
  }
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
