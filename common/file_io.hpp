#pragma once
// Whole-file reads and atomic writes.
#include <string>

namespace shardsynth::common {

// Writes `content` to a temporary file beside `path`, then renames it over
// `path`, so that readers never see a partial file. Throws InputError naming
// the path when it cannot be written.
void write_file_atomic(const std::string& path, const std::string& content);
// Throws InputError naming the path when write_file_atomic could not write
// it (its directory is missing or read-only). Leaves nothing behind: commands
// call it for every output path before they start, so a bad path fails
// before any output is written.
void check_writable(const std::string& path);
// Throws InputError naming the path when it cannot be read.
std::string read_file(const std::string& path);
// Like read_file, but a gzip-compressed file is decompressed on the fly
// (plain files pass through unchanged).
std::string read_file_gz(const std::string& path);

}  // namespace shardsynth::common
