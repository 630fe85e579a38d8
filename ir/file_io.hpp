#pragma once
// Whole-file reads and atomic writes.
#include <string>

namespace shardsynth::ir {

// Writes `content` to a temporary file beside `path`, then renames it over
// `path`, so that readers never see a partial file. Throws InputError naming
// the path when it cannot be written.
void write_file_atomic(const std::string& path, const std::string& content);
// Throws InputError naming the path when it cannot be read.
std::string read_file(const std::string& path);
// Like read_file, but a gzip-compressed file is decompressed on the fly
// (plain files pass through unchanged).
std::string read_file_gz(const std::string& path);

}  // namespace shardsynth::ir
