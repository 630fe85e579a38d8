#pragma once
// The project version and the git commit a build was made from, for the
// commands' `--version` (synth, shard-run) and for library users.
#include <string>
#include <string_view>

namespace shardsynth::ir {

// The version in CMake's project() call, e.g. "0.1.0".
std::string_view version();
// The git commit the build was made from: 40 hex digits, with "-dirty"
// appended when tracked files had uncommitted changes, or "unknown" when the
// source tree was not a git checkout (a release tarball).
std::string_view git_commit();
// What `PROGRAM --version` prints: "synth 0.1.0 (commit 1a2b...)".
std::string version_line(std::string_view program);

}  // namespace shardsynth::ir
