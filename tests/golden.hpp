#pragma once
// Golden-text helpers: expected outputs live in tests/golden/.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace shardsynth::testing {

inline std::string golden(const std::string& name) {
  std::ifstream in(std::string(SHARDSYNTH_GOLDEN_DIR) + "/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("missing golden file " + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace shardsynth::testing
