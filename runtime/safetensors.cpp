#include "runtime/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/error.hpp"
#include "ir/json_field.hpp"
#include "ir/file_io.hpp"
#include "ir/tensor.hpp"

namespace shardsynth::runtime {

namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

// The largest integer magnitude fp32 holds exactly.
constexpr int64_t kExactIntLimit = int64_t{1} << 24;

// The file dtype a tensor is written in: its 16-bit type, else F32.
std::string file_dtype(const Tensor& t) {
  if (!t.holds_bits()) return "F32";
  return t.dtype == ir::DType::bfloat16 ? "BF16" : "F16";
}

// Bytes a tensor's elements take in the file: its storage.
uint64_t stored_size(const Tensor& t) {
  return t.holds_bits() ? t.bits.size() * sizeof(uint16_t) : t.data.size() * sizeof(float);
}

// Bytes per element of a supported dtype; 0 for an unknown one.
std::size_t dtype_size(const std::string& dtype) {
  if (dtype == "F32" || dtype == "I32") return 4;
  if (dtype == "F16" || dtype == "BF16") return 2;
  if (dtype == "I64") return 8;
  return 0;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or nan
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // normal: rebias 15 -> 127
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal: shift the mantissa up until its leading one is implicit.
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

template <typename T>
T load(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

struct Entry {
  std::string name;           // tensor name
  std::string dtype;          // safetensors dtype
  std::vector<int64_t> shape;  // extents
  uint64_t begin = 0;         // first data byte, relative to the data section
  uint64_t end = 0;           // one past the last data byte
};

}  // namespace

std::map<std::string, Tensor> read_safetensors(const std::string& path) {
  return parse_safetensors(ir::read_file(path), path);
}

std::map<std::string, Tensor> parse_safetensors(const std::string& bytes, const std::string& path) {
  const auto fail = [&](const std::string& what) { throw ir::InputError(path + ": " + what); };
  if (bytes.size() < 8) {
    fail("file is " + std::to_string(bytes.size()) + " bytes, shorter than the 8-byte header length");
  }
  const uint64_t header_len = load<uint64_t>(bytes.data());
  if (header_len > bytes.size() - 8) {
    fail("header length " + std::to_string(header_len) + " is beyond the end of the file (" +
         std::to_string(bytes.size()) + " bytes)");
  }
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(header_len));
  } catch (const nlohmann::json::exception& e) {
    fail("header is not valid JSON (" + ir::json_parse_failure(e) + ")");
  }
  if (!header.is_object()) fail("header is not a JSON object");
  const uint64_t data_size = bytes.size() - 8 - header_len;
  const char* data = bytes.data() + 8 + header_len;

  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) fail("\"__metadata__\" is not an object");
      continue;
    }
    const std::string where = "tensor '" + name + "': ";
    if (!info.is_object()) fail(where + "entry is not an object");
    Entry entry;
    entry.name = name;
    if (!info.contains("dtype")) fail(where + "missing \"dtype\"");
    if (!info["dtype"].is_string()) fail(where + "\"dtype\" is not a string");
    entry.dtype = info["dtype"].get<std::string>();
    const std::size_t elem = dtype_size(entry.dtype);
    if (elem == 0) fail(where + "unknown dtype '" + entry.dtype + "' (supported: F32, F16, BF16, I64, I32)");
    if (!info.contains("shape")) fail(where + "missing \"shape\"");
    if (!info["shape"].is_array()) fail(where + "\"shape\" is not an array");
    for (const auto& extent : info["shape"]) {
      if (!extent.is_number_unsigned()) fail(where + "\"shape\" holds something other than a non-negative integer");
      const uint64_t e = extent.get<uint64_t>();
      if (e > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(where + "extent " + std::to_string(e) + " is beyond int64");
      entry.shape.push_back(static_cast<int64_t>(e));
    }
    // Checked product: a shape whose byte size int64 cannot count needs more
    // than any file holds (Tensor::numel multiplies in order, so this holds
    // even when a later extent is 0).
    bool too_big = false;
    uint64_t need = 0;
    try {
      const auto numel = static_cast<uint64_t>(ir::num_elements(entry.shape));
      too_big = numel > std::numeric_limits<uint64_t>::max() / elem;
      if (!too_big) need = numel * elem;
    } catch (const ir::InputError&) {
      too_big = true;
    }
    if (!info.contains("data_offsets")) fail(where + "missing \"data_offsets\"");
    const auto& offsets = info["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned()) {
      fail(where + "\"data_offsets\" is not a pair of non-negative integers");
    }
    entry.begin = offsets[0].get<uint64_t>();
    entry.end = offsets[1].get<uint64_t>();
    if (entry.begin > entry.end || entry.end > data_size) {
      fail(where + "data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
           "] are out of range (data section is " + std::to_string(data_size) + " bytes)");
    }
    if (too_big || entry.end - entry.begin != need) {
      fail(where + "data_offsets span " + std::to_string(entry.end - entry.begin) + " bytes but shape * " +
           entry.dtype + " size needs " + (too_big ? std::string("more than the file holds") : std::to_string(need)));
    }
    entries.push_back(std::move(entry));
  }
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i]->begin < by_offset[i - 1]->end) {
      fail("tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name + "' have overlapping data_offsets");
    }
  }

  std::map<std::string, Tensor> tensors;
  for (const Entry& e : entries) {
    Tensor t;
    t.shape = e.shape;
    const std::size_t elem = dtype_size(e.dtype);
    const std::size_t n = (e.end - e.begin) / elem;
    t.data.resize(n);
    const char* p = data + e.begin;
    for (std::size_t i = 0; i < n; ++i, p += elem) {
      if (e.dtype == "F32") {
        t.data[i] = load<float>(p);
      } else if (e.dtype == "F16") {
        t.data[i] = half_to_float(load<uint16_t>(p));
      } else if (e.dtype == "BF16") {
        t.data[i] = std::bit_cast<float>(static_cast<uint32_t>(load<uint16_t>(p)) << 16);
      } else {
        const int64_t v = e.dtype == "I64" ? load<int64_t>(p) : load<int32_t>(p);
        if (v > kExactIntLimit || v < -kExactIntLimit) {
          fail("tensor '" + e.name + "': integer " + std::to_string(v) + " at element " + std::to_string(i) +
               " is beyond 2^24, which fp32 cannot hold exactly");
        }
        t.data[i] = static_cast<float>(v);
      }
    }
    tensors.emplace(e.name, std::move(t));
  }
  return tensors;
}

void write_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {  // std::map: name order
    const std::size_t n = t.holds_bits() ? t.bits.size() : t.data.size();
    if (static_cast<int64_t>(n) != t.numel()) {
      throw std::invalid_argument("write_safetensors: tensor '" + name + "' has " + std::to_string(n) +
                                  " elements but its shape needs " + std::to_string(t.numel()));
    }
    const uint64_t size = stored_size(t);
    header[name] = {{"dtype", file_dtype(t)}, {"shape", t.shape}, {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // pad so the data starts 8-byte aligned
  std::string out(8, '\0');
  const uint64_t header_len = text.size();
  std::memcpy(out.data(), &header_len, 8);
  out += text;
  out.reserve(out.size() + offset);
  for (const auto& [name, t] : tensors) {
    // A 16-bit tensor is written as its patterns (F16, BF16), as it is held.
    const void* bytes = t.holds_bits() ? static_cast<const void*>(t.bits.data()) : static_cast<const void*>(t.data.data());
    out.append(static_cast<const char*>(bytes), stored_size(t));
  }
  ir::write_file_atomic(path, out);
}

}  // namespace shardsynth::runtime
