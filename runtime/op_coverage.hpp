#pragma once
// What the runtime declares about the op kinds of ir's op table
// (ir/op_table.hpp), so that a kind is never skipped silently: every kind
// has a CPU forward kernel (runtime/reference.cpp) and a CPU backward
// kernel (runtime/backward.cpp) unless it is listed here as not executed,
// with the reason. tests/runtime/op_registry_test.cpp holds the tables to
// this: it fails when a kind lacks a kernel, or when a kernel is keyed by a
// kind the op table does not have.
#include <string_view>

namespace shardsynth::runtime {

struct UnexecutedKind {
  std::string_view kind;    // an op table kind
  std::string_view reason;  // why the runtime does not run it
};

inline constexpr UnexecutedKind kUnexecutedKinds[] = {
    {"opaque", "an op outside the table, planned replicated so that a graph with it can still be planned; "
               "shard-run rejects such a graph, since it has no definition of what the op computes"},
};

}  // namespace shardsynth::runtime
