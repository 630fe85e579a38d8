#pragma once
// Plain-text tables in the layout the Slapo PR logs (python-tabulate's
// "simple" format): left-aligned columns, each at least two wider than its
// header, separated by two spaces, a dashed rule under the header, and no
// trailing blanks.
#include <string>
#include <vector>

namespace shardsynth::ir {

std::string format_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows);

// Wraps a table the way the PR's logger prints it: a leading blank on the
// first line and a trailing blank on the last.
std::string as_logged(const std::string& table);

}  // namespace shardsynth::ir
