#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "ir/error.hpp"
#include "ir/file_io.hpp"
#include "runtime/safetensors.hpp"

using namespace shardsynth;
using runtime::Tensor;

namespace {

// A path in a fresh scratch directory of this process.
std::string scratch_path(const std::string& file) {
  const auto dir = std::filesystem::temp_directory_path() / ("shardsynth_safetensors_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / file).string();
}

// A safetensors file from a header text and raw data bytes.
std::string file_bytes(const std::string& header, const std::string& data, uint64_t header_len) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &header_len, 8);
  return out + header + data;
}
std::string file_bytes(const std::string& header, const std::string& data) {
  return file_bytes(header, data, header.size());
}

template <typename T>
std::string raw(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

// Writes `bytes` to `file` and expects read_safetensors to throw an
// InputError naming the file and containing `what`.
void expect_malformed(const std::string& file, const std::string& bytes, const std::string& what) {
  const std::string path = scratch_path(file);
  ir::write_file_atomic(path, bytes);
  CAPTURE(file);
  try {
    runtime::read_safetensors(path);
    FAIL("no error");
  } catch (const ir::InputError& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.find(path) != std::string::npos);
    CHECK(message.find(what) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("safetensors_RoundTrip") {
  const std::map<std::string, Tensor> tensors = {
      {"b.weight", Tensor{{2, 3}, {1, -2, 3.5f, 0, 1e-7f, -1e30f}}},
      {"a", Tensor{{4}, {1, 2, 3, 4}}},
      {"scalar", Tensor{{}, {42}}},
      {"empty", Tensor{{0, 5}, {}}},
  };
  const std::string path = scratch_path("round_trip.safetensors");
  runtime::write_safetensors(path, tensors);
  CHECK(runtime::read_safetensors(path) == tensors);
  // Deterministic: the same tensors give the same bytes, header 8-byte aligned.
  const std::string first = ir::read_file(path);
  runtime::write_safetensors(path, tensors);
  CHECK(ir::read_file(path) == first);
  uint64_t header_len = 0;
  std::memcpy(&header_len, first.data(), 8);
  CHECK(header_len % 8 == 0);
  CHECK(first.find("\"a\"") < first.find("\"b.weight\""));
}

TEST_CASE("safetensors_ReadsHandBuiltF16Bf16IntegersAndMetadata") {
  // F16: 1.0 = 0x3c00, -2.0 = 0xc000, 0.5 = 0x3800, smallest subnormal 2^-24 = 0x0001.
  // BF16: 1.0 = 0x3f80, -3.0 = 0xc040.
  const std::string data = raw<uint16_t>({0x3c00, 0xc000, 0x3800, 0x0001}) + raw<uint16_t>({0x3f80, 0xc040}) +
                           raw<int64_t>({0, 7, 16777216}) + raw<int32_t>({-5, 50256});
  const std::string header =
      R"({"__metadata__": {"format": "pt"},
          "h": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]},
          "b": {"dtype": "BF16", "shape": [2], "data_offsets": [8, 12]},
          "ids": {"dtype": "I64", "shape": [1, 3], "data_offsets": [12, 36]},
          "i32": {"dtype": "I32", "shape": [2], "data_offsets": [36, 44]}})";
  const std::string path = scratch_path("hand_built.safetensors");
  ir::write_file_atomic(path, file_bytes(header, data));
  const auto t = runtime::read_safetensors(path);
  REQUIRE(t.size() == 4);
  CHECK(t.at("h") == Tensor{{2, 2}, {1.0f, -2.0f, 0.5f, 5.9604644775390625e-8f}});
  CHECK(t.at("b") == Tensor{{2}, {1.0f, -3.0f}});
  CHECK(t.at("ids") == Tensor{{1, 3}, {0.0f, 7.0f, 16777216.0f}});
  CHECK(t.at("i32") == Tensor{{2}, {-5.0f, 50256.0f}});
}

TEST_CASE("safetensors_MalformedFilesNameTheFile") {
  const std::string ok = R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  const std::string eight = raw<float>({1, 2});
  expect_malformed("truncated.safetensors", std::string("\x10\x00\x00", 3), "shorter than the 8-byte header length");
  expect_malformed("cut.safetensors", file_bytes(ok, eight).substr(0, 20), "beyond the end of the file");
  expect_malformed("huge.safetensors", file_bytes(ok, eight, uint64_t{1} << 62), "beyond the end of the file");
  expect_malformed("bad_json.safetensors", file_bytes(R"({"x": {"dtype": )", eight), "not valid JSON");
  expect_malformed("not_object.safetensors", file_bytes("[1, 2]", eight), "not a JSON object");
  expect_malformed("no_dtype.safetensors",
                   file_bytes(R"({"x": {"shape": [2], "data_offsets": [0, 8]}})", eight), "missing \"dtype\"");
  expect_malformed("no_shape.safetensors",
                   file_bytes(R"({"x": {"dtype": "F32", "data_offsets": [0, 8]}})", eight), "missing \"shape\"");
  expect_malformed("no_offsets.safetensors", file_bytes(R"({"x": {"dtype": "F32", "shape": [2]}})", eight),
                   "missing \"data_offsets\"");
  expect_malformed("dtype_type.safetensors",
                   file_bytes(R"({"x": {"dtype": 3, "shape": [2], "data_offsets": [0, 8]}})", eight),
                   "\"dtype\" is not a string");
  expect_malformed("shape_type.safetensors",
                   file_bytes(R"({"x": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", eight),
                   "\"shape\" holds");
  expect_malformed("offsets_type.safetensors",
                   file_bytes(R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0]}})", eight),
                   "\"data_offsets\" is not a pair");
  expect_malformed("out_of_range.safetensors",
                   file_bytes(R"({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", eight),
                   "out of range");
  expect_malformed("reversed.safetensors",
                   file_bytes(R"({"x": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})", eight),
                   "out of range");
  expect_malformed("size_mismatch.safetensors",
                   file_bytes(R"({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", eight),
                   "shape * F32 size needs 12");
  expect_malformed("huge_shape.safetensors",
                   file_bytes(R"({"x": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})",
                              eight),
                   "more than the file holds");
  expect_malformed("overlap.safetensors",
                   file_bytes(R"({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                  "y": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                              eight),
                   "overlapping");
  expect_malformed("unknown_dtype.safetensors",
                   file_bytes(R"({"x": {"dtype": "F8_E4M3", "shape": [8], "data_offsets": [0, 8]}})", eight),
                   "unknown dtype 'F8_E4M3'");
  expect_malformed("big_id.safetensors",
                   file_bytes(R"({"x": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}})",
                              raw<int64_t>({16777217})),
                   "beyond 2^24");
  std::filesystem::remove_all(std::filesystem::path(scratch_path("x")).parent_path());
}

TEST_CASE("safetensors_WriteRejectsAShapeDataMismatch") {
  CHECK_THROWS_AS(runtime::write_safetensors(scratch_path("bad.safetensors"), {{"x", Tensor{{3}, {1, 2}}}}),
                  std::invalid_argument);
}
