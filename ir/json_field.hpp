#pragma once
// Typed JSON field access with one-line errors, from common/json_field.hpp
// under ir's names (the solver of plain problems reads JSON without ir).
#include "common/json_field.hpp"
#include "ir/error.hpp"

namespace shardsynth::ir {

using common::json_field;
using common::json_parse_failure;

}  // namespace shardsynth::ir
