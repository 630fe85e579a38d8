#pragma once
// Runs a command line through the shell and captures what it printed.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace shardsynth::testing {

struct CommandResult {
  int exit_code = -1;  // process exit status
  std::string out;     // captured stdout
  std::string err;     // captured stderr
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh empty directory under the system temp dir.
inline std::filesystem::path scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("shardsynth_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline CommandResult run_command(const std::string& command) {
  const auto dir = scratch_dir("cmd");
  const auto out = dir / "out", err = dir / "err";
  const int status = std::system((command + " >" + out.string() + " 2>" + err.string()).c_str());
  CommandResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  std::filesystem::remove_all(dir);
  return r;
}

inline int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace shardsynth::testing
