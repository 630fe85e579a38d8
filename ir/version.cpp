#include "ir/version.hpp"

// version() and git_commit() live in version_stamp.cpp, which the build
// generates (cmake/version_stamp.cmake) and rewrites only when the commit
// changes, so a new commit recompiles that one file, not this module.
namespace shardsynth::ir {

std::string version_line(std::string_view program) {
  std::string line(program);
  line += ' ';
  line += version();
  line += " (commit ";
  line += git_commit();
  line += ')';
  return line;
}

}  // namespace shardsynth::ir
