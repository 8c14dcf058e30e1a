#include "patch/lines.h"

namespace apexnpu::patch {

std::vector<std::string_view> split_lines(std::string_view bytes) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < bytes.size()) {
    const std::size_t nl = bytes.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? bytes.size() : nl + 1;
    lines.push_back(bytes.substr(start, end - start));
    start = end;
  }
  return lines;
}

}  // namespace apexnpu::patch
