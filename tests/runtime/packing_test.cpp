// The wire form of tensors (runtime/packing.hpp): every element travels in
// the size the cost model prices it at (ir::dtype_bytes).
#include <doctest/doctest.h>

#include "ir/dtype.hpp"
#include "ir/error.hpp"
#include "runtime/half.hpp"
#include "runtime/packing.hpp"

using namespace shardsynth;
using namespace shardsynth::runtime;

TEST_CASE("wire_lanes_TheCostModelsElementSize") {
  for (ir::DType dtype : {ir::DType::float32, ir::DType::int64}) {
    CHECK(wire_lanes(dtype) * static_cast<int64_t>(sizeof(float)) == ir::dtype_bytes(dtype));
  }
}

// A 16-bit element is one lane in its 16-bit storage: the communicators send
// it as 2 bytes (runtime/half.hpp), and its sums stay summable.
TEST_CASE("to_wire_HalfTypesAreOneLaneRoundedAndLabelled") {
  for (ir::DType dtype : {ir::DType::float16, ir::DType::bfloat16}) {
    CAPTURE(ir::dtype_name(dtype));
    CHECK(wire_lanes(dtype) == 1);
    Tensor t = zeros({2});
    t.data = {1.0f + 1.0f / 4096.0f, -3.0f};
    const Tensor wire = to_wire(t, dtype);
    CHECK(wire.shape == t.shape);
    CHECK(wire.dtype == dtype);
    CHECK(wire.data.empty());  // travels as its 16-bit storage
    CHECK(wire.bits == std::vector<uint16_t>{half_bits(1.0f, dtype), half_bits(-3.0f, dtype)});  // 1 + 2^-12 rounds to 1
    CHECK(from_wire(wire, dtype) == wire);
    CHECK(to_wire(wire, dtype) == wire);  // already in its storage
  }
}

TEST_CASE("to_wire_Int64IdsRoundTripInTwoLanes") {
  Tensor ids = zeros({2, 3});
  const float values[] = {0, 1, 50256, 255, 16777215, 7};
  for (int i = 0; i < 6; ++i) ids.data[i] = values[i];
  const Tensor wire = to_wire(ids, ir::DType::int64);
  CHECK(wire.shape == std::vector<int64_t>{2, 3, 2});
  CHECK(wire.numel() * static_cast<int64_t>(sizeof(float)) == ids.numel() * 8);
  CHECK(from_wire(wire, ir::DType::int64) == ids);
  // A slice of the wire form along a model dim is the wire form of the slice.
  CHECK(from_wire(slice_part(wire, 1, 3, 1), ir::DType::int64) == slice_part(ids, 1, 3, 1));
}

TEST_CASE("to_wire_Float32IsItself") {
  Tensor t = zeros({4});
  t.data = {0.5f, -1.25f, 3.0f, 1e-8f};
  CHECK(to_wire(t, ir::DType::float32) == t);
  CHECK(from_wire(t, ir::DType::float32) == t);
}
