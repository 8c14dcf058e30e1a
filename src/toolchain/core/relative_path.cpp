#include "core/relative_path.h"

#include <fmt/core.h>

#include "core/git_path_rules.h"

namespace apexnpu {

std::optional<std::string> unsafe_path_reason(std::string_view path) {
  if (path.empty()) return "the path is empty";
  if (path.find('\0') != std::string_view::npos) return "the path contains a NUL byte";
  if (path.size() > max_path_bytes)
    return fmt::format("the path is too long ({} bytes, at most {})", path.size(), max_path_bytes);
  if (path.front() == '/') return "the path is absolute";
  std::size_t components = 0;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() && end != path.size()) return "the path has an empty component";
    if (part == ".") return "the path has a '.' component";
    if (part == "..") return "the path has a '..' component";
    if (auto reason = git_component_reason(part)) return reason;
    if (++components > max_path_components)
      return fmt::format("the path is too deep (more than {} components)", max_path_components);
    start = end + 1;
  }
  if (path.back() == '/') return "the path names a directory, not a file";
  return std::nullopt;
}

}  // namespace apexnpu
