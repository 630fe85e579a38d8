#pragma once
// Reads an IOPDDL contest file as a stream: zlib's gzread (gzip or plain
// alike) in 1 MiB chunks feeds nlohmann::json's SAX parser, whose events fill
// a RawIopddl's flat tables directly. Neither the whole text nor a JSON
// document is ever held, only the numbers.
#include <string>

#include "synth/solver/iopddl_raw.hpp"

namespace shardsynth::synth {

// The raw problem in `path`, unchecked (problem_from_raw checks it). Throws
// common::InputError for a file that cannot be read and `path: not valid
// JSON (...)` for a text that does not parse, as json::parse would say.
RawIopddl read_iopddl_stream(const std::string& path);

}  // namespace shardsynth::synth
