#pragma once
// Whole-file reads and atomic writes, from common/file_io.hpp under ir's
// names (the solver of plain problems reads its files without ir).
#include "common/file_io.hpp"

namespace shardsynth::ir {

using common::check_writable;
using common::read_file;
using common::read_file_gz;
using common::write_file_atomic;

}  // namespace shardsynth::ir
