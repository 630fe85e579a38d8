#pragma once
// The fuzz targets: one function per reader, fed arbitrary bytes. Bad input
// must end in ir::InputError (swallowed here); anything else (another
// exception, a sanitizer report, a broken round trip) is a bug. The same
// functions run under libFuzzer (libfuzzer_main.cpp, clang, scripts/fuzz) and
// in the ordinary suite, which replays the seed corpus and every regression
// input (corpus_replay_test.cpp).
#include <string>
#include <string_view>
#include <vector>

namespace shardsynth::fuzz {

// Signature shared by every target.
using Target = void (*)(std::string_view bytes);

// ir::graph_from_json under both unknown-op policies; a graph that reads
// must write back (graph_to_json) to JSON that reads to the same JSON.
void graph_json(std::string_view bytes);
// synth::problem_from_iopddl; a problem that reads must round-trip through
// problem_to_iopddl and evaluate any in-range assignment without overflow.
void iopddl(std::string_view bytes);
// ir::parse_spec on 1-D and 2-D meshes (the first byte picks); a spec that
// parses must print (to_string) to text that parses to the same spec.
void spec(std::string_view bytes);
// ir::schedule_from_json; a schedule that reads must round-trip through to_json.
void schedule(std::string_view bytes);
// runtime::parse_safetensors; tensors that read hold exactly numel values.
void safetensors(std::string_view bytes);

struct NamedTarget {
  const char* name;  // the harness name: tests/fuzz/corpus/<name>/, fuzz_<name>
  Target run;        // the target function
};

// Every target, in a fixed order.
const std::vector<NamedTarget>& targets();

}  // namespace shardsynth::fuzz
