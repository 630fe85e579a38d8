#pragma once
// The fenced code blocks of a Markdown file in docs/, so tests can hold the
// documented examples to the code that reads them.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardsynth::testing {

// Every block fenced as ```<language> ... ``` in `path`, in file order, without its fences.
inline std::vector<std::string> fenced_blocks(const std::string& path, const std::string& language) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> blocks;
  std::string line, block;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```" + language) {
      inside = true;
      block.clear();
    } else if (inside && line == "```") {
      inside = false;
      blocks.push_back(block);
    } else if (inside) {
      block += line + "\n";
    }
  }
  if (inside) throw std::runtime_error(path + ": an unclosed ```" + language + " block");
  return blocks;
}

}  // namespace shardsynth::testing
