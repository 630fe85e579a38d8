#pragma once
// An IOPDDL contest problem as read, before any check: each table (nodes.
// intervals, nodes.costs, nodes.usages, edges.nodes, edges.costs) is one flat
// array of integers with row offsets, plus the first bad value of each row.
// Both readers fill it, problem_from_iopddl from a JSON document and
// load_iopddl from a SAX stream, and `problem_from_raw` alone checks it and
// builds the Problem, so the two give the same Problem and the same message
// for the same bad file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "synth/solver/problem.hpp"

namespace shardsynth::synth {

// What stands under a table's key.
enum class RawPresence {
  kMissing,   // no such key, or its parent is not an object
  kNotArray,  // a value that is not an array
  kArray,     // an array, whose rows are in the table
};

// The first value of a row that is not an accepted integer (or a row that is
// not an array at all).
struct RawFault {
  std::size_t row = 0;        // the row's index in its table
  std::ptrdiff_t entry = -1;  // the value's index in the row; -1 when the row itself is not an array
  std::string reason;         // what integer_fault said about the value (empty when entry is -1)
};

// One table of a problem: an array of arrays of integers.
struct RawTable {
  RawPresence presence = RawPresence::kMissing;  // what stands under the table's key
  std::vector<int64_t> values;                   // the rows' integers, row after row (a faulty row stops at its fault)
  std::vector<std::size_t> starts{0};            // row r is values[starts[r], starts[r + 1]); one more than the rows
  std::vector<RawFault> faults;                  // at most one per row, in row order

  // The number of rows.
  std::size_t rows() const { return starts.size() - 1; }
  // Forgets every row and records `now` as what stands under the key.
  void reset(RawPresence now);
  // Closes the row being appended.
  void end_row() { starts.push_back(values.size()); }
};

// A whole problem as read.
struct RawIopddl {
  bool has_problem = false;                 // the root is an object holding "problem"
  bool has_nodes = false;                   // "problem" is an object holding "nodes"
  bool has_edges = false;                   // "problem" is an object holding "edges"
  std::string name = "iopddl";              // problem.name where that is a string
  RawTable intervals;                       // nodes.intervals
  RawTable node_costs;                      // nodes.costs
  RawTable usages;                          // nodes.usages
  RawTable edge_nodes;                      // edges.nodes
  RawTable edge_costs;                      // edges.costs
  nlohmann::json usage_limit;               // problem.usage_limit as written; null when absent
};

// Why `value` is not an integer the format accepts (a whole number in
// [int64 min, 10^18]), e.g. "expected an integer, got \"x\""; empty when it
// is one, which is then stored in `out`.
std::string integer_fault(const nlohmann::json& value, int64_t& out);

// The raw form of a parsed contest document (any JSON value).
RawIopddl raw_from_json(const nlohmann::json& root);

// Checks a raw problem and builds it. Throws common::InputError naming the
// offending field and index, prefixed with `where` (e.g. the file name).
Problem problem_from_raw(RawIopddl raw, const std::string& where);

}  // namespace shardsynth::synth
