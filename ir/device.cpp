#include "ir/device.hpp"

#include <array>

#include "ir/error.hpp"

namespace shardsynth::ir {
namespace {

struct DevicePreset {
  std::string_view name;  // as --device takes it
  double fp32_tflops;     // dense fp32 without tensor cores, 10^12 flop/s
  double half_tflops;     // dense bf16 and fp16 on tensor cores (no sparsity), 10^12 flop/s
};

// Dense figures (the datasheets print bf16/fp16 tensor-core figures with 2:4
// sparsity; dense is half of those):
//  - h100: NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column: FP32 67
//    TFLOPS, BF16 and FP16 Tensor Core 1,979 TFLOPS with sparsity (989.4 dense);
//  - a100: NVIDIA A100 Tensor Core GPU datasheet
//    (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), SXM: FP32 19.5
//    TFLOPS, BF16 and FP16 Tensor Core 312 TFLOPS (624 with sparsity).
constexpr std::array<DevicePreset, 2> kDevices{{
    {"h100", 67.0, 989.4},
    {"a100", 19.5, 312.0},
}};

}  // namespace

std::vector<std::string> device_names() {
  std::vector<std::string> names;
  for (const auto& d : kDevices) names.emplace_back(d.name);
  return names;
}

void apply_device(Mesh& mesh, std::string_view name) {
  for (const auto& d : kDevices) {
    if (d.name != name) continue;
    mesh.peak_tflops = d.fp32_tflops;
    mesh.dtype_peak_tflops = {{DType::float32, d.fp32_tflops}, {DType::bfloat16, d.half_tflops},
                              {DType::float16, d.half_tflops}};
    return;
  }
  std::string known;
  for (const auto& n : device_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown device '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace shardsynth::ir
