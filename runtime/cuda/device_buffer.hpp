#pragma once
// DeviceBuffer: an RAII fp32 buffer in GPU memory (cudaMalloc / cudaFree),
// with checked copies to and from host vectors. Shared by the CUDA kernels
// and the NCCL communicator.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/cuda/cuda_check.hpp"

namespace shardsynth::runtime::cuda {

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t elements) : size_(elements) {
    if (size_ > 0) SHARDSYNTH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), size_ * sizeof(float)));
  }
  // A device copy of `host`.
  explicit DeviceBuffer(const std::vector<float>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);  // not checked: destructors run during aborts too
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Copies host.size() (<= size()) elements host -> device, ordered on `stream`.
  void upload(const std::vector<float>& host, cudaStream_t stream = nullptr) {
    if (!host.empty()) {
      SHARDSYNTH_CUDA_CHECK(cudaMemcpyAsync(data_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    }
  }
  // Copies host.size() (<= size()) elements device -> host and waits for `stream`.
  void download(std::vector<float>& host, cudaStream_t stream = nullptr) const {
    if (!host.empty()) {
      SHARDSYNTH_CUDA_CHECK(cudaMemcpyAsync(host.data(), data_, host.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
    }
    SHARDSYNTH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  float* data_ = nullptr;  // device memory, null when empty
  std::size_t size_ = 0;   // elements
};

// The 16-bit patterns (bfloat16, float16: runtime/half.hpp) of a tensor in
// GPU memory: what cuBLAS's 16-bit GEMMs read and NCCL's 16-bit collectives move.
class DeviceHalfBuffer {
 public:
  explicit DeviceHalfBuffer(std::size_t elements) : size_(elements) {
    if (size_ > 0) SHARDSYNTH_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), size_ * sizeof(uint16_t)));
  }
  // A device copy of `host`.
  explicit DeviceHalfBuffer(const std::vector<uint16_t>& host) : DeviceHalfBuffer(host.size()) { upload(host); }
  ~DeviceHalfBuffer() {
    if (data_) cudaFree(data_);
  }
  DeviceHalfBuffer(const DeviceHalfBuffer&) = delete;
  DeviceHalfBuffer& operator=(const DeviceHalfBuffer&) = delete;

  uint16_t* data() { return data_; }
  const uint16_t* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Copies host.size() (<= size()) patterns host -> device, ordered on `stream`.
  void upload(const std::vector<uint16_t>& host, cudaStream_t stream = nullptr) {
    if (!host.empty()) {
      SHARDSYNTH_CUDA_CHECK(
          cudaMemcpyAsync(data_, host.data(), host.size() * sizeof(uint16_t), cudaMemcpyHostToDevice, stream));
    }
  }
  // Copies host.size() (<= size()) patterns device -> host and waits for `stream`.
  void download(std::vector<uint16_t>& host, cudaStream_t stream = nullptr) const {
    if (!host.empty()) {
      SHARDSYNTH_CUDA_CHECK(
          cudaMemcpyAsync(host.data(), data_, host.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost, stream));
    }
    SHARDSYNTH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  uint16_t* data_ = nullptr;  // device memory, null when empty
  std::size_t size_ = 0;      // elements
};

}  // namespace shardsynth::runtime::cuda
