#include "ir/text_table.hpp"

#include <algorithm>

namespace shardsynth::ir {
namespace {

constexpr std::size_t kHeaderPadding = 2;
constexpr const char* kSeparator = "  ";

std::string join_row(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths) {
  std::string line;
  for (std::size_t c = 0; c < widths.size(); ++c) {
    if (c > 0) line += kSeparator;
    std::string cell = c < cells.size() ? cells[c] : "";
    line += cell + std::string(widths[c] - std::min(widths[c], cell.size()), ' ');
  }
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

}  // namespace

std::string format_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& h : headers) widths.push_back(h.size() + kHeaderPadding);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text = join_row(headers, widths) + "\n";
  std::vector<std::string> rule;
  for (std::size_t w : widths) rule.emplace_back(w, '-');
  text += join_row(rule, widths);
  for (const auto& row : rows) text += "\n" + join_row(row, widths);
  return text;
}

std::string as_logged(const std::string& table) { return " " + table + " "; }

}  // namespace shardsynth::ir
