#include "cli/text_table.h"

#include <algorithm>

namespace apexnpu::cli {

namespace {

std::string line(const std::vector<std::string>& cells, const std::vector<std::size_t>& width) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    out += cells[i];
    if (i + 1 < cells.size()) out += std::string(width[i] - cells[i].size() + 2, ' ');
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

}  // namespace

std::string text_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out += line(rows[r], width);
    if (r == 0) {
      std::vector<std::string> rule;
      for (std::size_t i = 0; i < rows[0].size(); ++i) rule.push_back(std::string(width[i], '-'));
      out += line(rule, width);
    }
  }
  return out;
}

}  // namespace apexnpu::cli
