#pragma once
// Rows of cells as an aligned text table: the first row is the header, ruled off below; columns
// are two spaces apart and the last is not padded.
#include <string>
#include <vector>

namespace apexnpu::cli {

std::string text_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace apexnpu::cli
