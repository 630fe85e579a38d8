// The libFuzzer entry point of one harness, picked at compile time by
// SHARDSYNTH_FUZZ_TARGET (a function of fuzz_targets.hpp). Built with clang
// and -fsanitize=fuzzer only when SHARDSYNTH_FUZZ is on (scripts/fuzz).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  shardsynth::fuzz::SHARDSYNTH_FUZZ_TARGET(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
